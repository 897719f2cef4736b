package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("gru",
	gradCase{name: "reset_after_init", attrs: Attrs{Offsets: raggedOffsets, ResetAfter: true},
		in: ins(randn(1, 8, 3), randn(2, 3, 6), randn(3, 2, 6), randn(4, 2, 6), randn(5, 4, 2)), wrt: []int{0, 1, 2, 3, 4}},
	gradCase{name: "reset_before_init", attrs: Attrs{Offsets: raggedOffsets},
		in: ins(randn(6, 8, 3), randn(7, 3, 6), randn(8, 2, 6), randn(9, 6), randn(10, 4, 2)), wrt: []int{0, 1, 2, 3, 4}},
	gradCase{name: "reverse", attrs: Attrs{Offsets: raggedOffsets, Reverse: true, ResetAfter: true},
		in: ins(randn(11, 8, 2), randn(12, 2, 9), randn(13, 3, 9), randn(14, 2, 9)), wrt: []int{0, 1, 2, 3}},
	gradCase{name: "reverse_reset_before", attrs: Attrs{Offsets: raggedOffsets, Reverse: true},
		in: ins(randn(15, 8, 2), randn(16, 2, 9), randn(17, 3, 9), randn(18, 9)), wrt: []int{0, 1, 2, 3}},
)

var _ = addGradCases("gru_cell",
	gradCase{name: "reset_after", attrs: Attrs{ResetAfter: true},
		in: ins(randn(21, 3, 4), randn(22, 3, 2), randn(23, 4, 6), randn(24, 2, 6), randn(25, 2, 6)), wrt: []int{0, 1, 2, 3, 4}},
	gradCase{name: "reset_before", attrs: Attrs{ResetAfter: false},
		in: ins(randn(26, 3, 4), randn(27, 3, 2), randn(28, 4, 6), randn(29, 2, 6), randn(30, 6)), wrt: []int{0, 1, 2, 3, 4}},
)

// plainGRUStep is Keras GRUCell written out, gate blocks z, r, h̃ in
// columns [0,H), [H,2H), [2H,3H); b is [2, 3H] with resetAfter, else [3H].
func plainGRUStep(x, h, w, u, b []float64, hid int, resetAfter bool) []float64 {
	xw := func(col int) float64 {
		s := b[col]
		for a := range x {
			s += x[a] * w[a*3*hid+col]
		}
		return s
	}
	hu := func(v []float64, col int) float64 {
		s := 0.0
		if resetAfter {
			s = b[3*hid+col]
		}
		for a := range v {
			s += v[a] * u[a*3*hid+col]
		}
		return s
	}
	z, r := make([]float64, hid), make([]float64, hid)
	for k := 0; k < hid; k++ {
		z[k] = sig(xw(k) + hu(h, k))
		r[k] = sig(xw(hid+k) + hu(h, hid+k))
	}
	rh := make([]float64, hid)
	for k := range rh {
		rh[k] = r[k] * h[k]
	}
	hn := make([]float64, hid)
	for k := 0; k < hid; k++ {
		var hh float64
		if resetAfter {
			hh = math.Tanh(xw(2*hid+k) + r[k]*hu(h, 2*hid+k))
		} else {
			hh = math.Tanh(xw(2*hid+k) + hu(rh, 2*hid+k))
		}
		hn[k] = z[k]*h[k] + (1-z[k])*hh
	}
	return hn
}

func plainGRU(x, w, u, b, h0 *tensor.Tensor, off []int, reverse, resetAfter bool) *tensor.Tensor {
	hid, nIn := u.Dim(0), x.Dim(1)
	out := tensor.Zeros(tensor.Float64, x.Dim(0), hid)
	for q := 0; q+1 < len(off); q++ {
		h := make([]float64, hid)
		if h0 != nil {
			copy(h, h0.Float64s()[q*hid:])
		}
		for t := 0; t < off[q+1]-off[q]; t++ {
			r := off[q] + t
			if reverse {
				r = off[q+1] - 1 - t
			}
			h = plainGRUStep(x.Float64s()[r*nIn:(r+1)*nIn], h, w.Float64s(), u.Float64s(), b.Float64s(), hid, resetAfter)
			copy(out.Float64s()[r*hid:], h)
		}
	}
	return out
}

func TestGRUGateOrderMatchesPlainCell(t *testing.T) {
	x, w, u, h0 := randn(1, 8, 3), randn(2, 3, 6), randn(3, 2, 6), randn(4, 4, 2)
	for _, resetAfter := range []bool{true, false} {
		b := randn(5, 6)
		if resetAfter {
			b = randn(5, 2, 6)
		}
		for _, reverse := range []bool{false, true} {
			for _, init := range []*tensor.Tensor{nil, h0} {
				a := GRUAttrs{Offsets: raggedOffsets, Reverse: reverse, ResetAfter: resetAfter}
				got, err := GRU(x, w, u, b, init, a)
				require.NoError(t, err)
				requireClose(t, plainGRU(x, w, u, b, init, raggedOffsets, reverse, resetAfter), got, 1e-14, 1e-12)
				in := ins(x, w, u, b)
				if init != nil {
					in = append(in, init)
				}
				checkDTypes(t, func() Op { return GRUOp(a) }, in...)
			}
		}
	}
}

func TestGRUCellIsOneStep(t *testing.T) {
	x, h, w, u, b := randn(1, 3, 4), randn(2, 3, 2), randn(3, 4, 6), randn(4, 2, 6), randn(5, 2, 6)
	got, err := GRUCell(x, h, w, u, b, true)
	require.NoError(t, err)
	requireClose(t, plainGRU(x, w, u, b, h, []int{0, 1, 2, 3}, false, true), got, 1e-14, 1e-12)
	checkDTypes(t, func() Op { return GRUCellOp(true) }, x, h, w, u, b)
}

func TestGRUErrors(t *testing.T) {
	x, w, u := randn(1, 8, 3), randn(2, 3, 6), randn(3, 2, 6)
	for _, tc := range []struct {
		name       string
		in         []*tensor.Tensor
		off        []int
		resetAfter bool
		substr     string
	}{
		{"decreasing offsets", ins(x, w, u, randn(4, 6)), []int{0, 5, 4, 8}, false, "offsets [0 5 4 8] decrease at 2: 4 after 5"},
		{"overrun offsets", ins(x, w, u, randn(4, 6)), []int{0, 5, 10}, false, "offset 2 is 10 but the values have 8 rows"},
		{"w", ins(x, randn(2, 3, 5), u, randn(4, 6)), raggedOffsets, false, "gru: inputs float64[8 3], float64[3 5], float64[2 6], float64[6]: want x [rows, In] and W [In, 3H]"},
		{"u", ins(x, w, randn(3, 3, 6), randn(4, 6)), raggedOffsets, false, "want U [2 6] for W [3 6]"},
		{"bias reset_after", ins(x, w, u, randn(4, 6)), raggedOffsets, true, "want bias [2 6] (input, recurrent) with reset_after"},
		{"bias reset_before", ins(x, w, u, randn(4, 2, 6)), raggedOffsets, false, "want bias [6] without reset_after"},
		{"h0", ins(x, w, u, randn(4, 6), randn(5, 2, 2)), raggedOffsets, false, "want state h [4 2] for a batch of 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := GRUOp(GRUAttrs{Offsets: tc.off, ResetAfter: tc.resetAfter}).Forward(tc.in)
			require.ErrorContains(t, err, "gru: inputs")
			require.ErrorContains(t, err, tc.substr)
		})
	}
	_, err := GRUCell(randn(1, 3, 4), randn(2, 3, 2), randn(3, 4, 6), randn(4, 2, 6), randn(5, 6), true)
	require.ErrorContains(t, err, "gru_cell: inputs float64[3 4], float64[3 2], float64[4 6], float64[2 6], float64[6]: want bias [2 6]")
}

// A batch of empty sequences has no rows: every gradient is zero, in both
// GRU forms (without reset_after, Backward once sliced past the empty
// gate gradients).
func TestGRUAllEmptyBatch(t *testing.T) {
	for _, ra := range []bool{false, true} {
		bshape := []int{6}
		if ra {
			bshape = []int{2, 6}
		}
		in := ins(randn(1, 0, 3), randn(2, 3, 6), randn(3, 2, 6), randn(4, bshape...), randn(5, 2, 2))
		op := GRUOp(GRUAttrs{Offsets: []int{0, 0, 0}, ResetAfter: ra})
		out, err := op.Forward(in)
		require.NoError(t, err)
		require.Equal(t, tensor.Shape{0, 2}, out.Shape())
		grads, err := op.Backward(in, out, tensor.Zeros(tensor.Float64, 0, 2), []bool{true, true, true, true, true})
		require.NoError(t, err)
		for i, g := range grads {
			require.Equal(t, in[i].Shape(), g.Shape(), "gradient %d", i)
			for k := 0; k < g.Size(); k++ {
				require.Zero(t, g.At(k), "gradient %d element %d", i, k)
			}
		}
	}
}
