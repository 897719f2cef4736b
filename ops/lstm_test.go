package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// raggedOffsets mixes an empty, a length-1 and longer sequences.
var raggedOffsets = []int{0, 3, 3, 4, 8} // lengths 3, 0, 1, 4

var _ = addGradCases("lstm",
	gradCase{name: "peephole_init", attrs: Attrs{Offsets: raggedOffsets},
		in:  ins(randn(1, 8, 3), randn(2, 3, 8), randn(3, 2, 8), randn(4, 8), randn(5, 6), randn(6, 4, 2), randn(7, 4, 2)),
		wrt: []int{0, 1, 2, 3, 4, 5, 6}},
	gradCase{name: "reverse", attrs: Attrs{Offsets: raggedOffsets, Reverse: true},
		in:  ins(randn(8, 8, 3), randn(9, 3, 8), randn(10, 2, 8), randn(11, 8), randn(12, 6), randn(13, 4, 2), randn(14, 4, 2)),
		wrt: []int{0, 1, 2, 3, 4, 5, 6}},
	gradCase{name: "plain", attrs: Attrs{Offsets: []int{0, 5, 6}},
		in: ins(randn(15, 6, 2), randn(16, 2, 12), randn(17, 3, 12), randn(18, 12)), wrt: []int{0, 1, 2, 3}},
	// The SRL book model's activations: relu candidate, sigmoid cell output, peepholes.
	gradCase{name: "relu_sigmoid", attrs: Attrs{Offsets: raggedOffsets, Reverse: true, Candidate: ActRelu, Cell: ActSigmoid},
		in: ins(randn(51, 8, 3), randn(52, 3, 8), randn(53, 2, 8), randn(54, 8), randn(55, 6)), wrt: []int{0, 1, 2, 3, 4}},
	gradCase{name: "sigmoid_identity", attrs: Attrs{Offsets: raggedOffsets, Candidate: ActSigmoid, Cell: ActIdentity},
		in: ins(randn(56, 8, 3), randn(57, 3, 8), randn(58, 2, 8), randn(59, 8)), wrt: []int{0, 1, 2, 3}},
)

var _ = addGradCases("lstm_cell",
	gradCase{name: "peephole", attrs: Attrs{},
		in:  ins(randn(21, 3, 4), randn(22, 3, 2), randn(23, 3, 2), randn(24, 4, 8), randn(25, 2, 8), randn(26, 8), randn(27, 6)),
		wrt: []int{0, 1, 2, 3, 4, 5, 6}},
	gradCase{name: "plain", attrs: Attrs{},
		in:  ins(randn(28, 2, 3), randn(29, 2, 3), randn(30, 2, 3), randn(31, 3, 12), randn(32, 3, 12), randn(33, 12)),
		wrt: []int{0, 1, 2, 3, 4, 5}},
)

var _ = addGradCases("rnn_final_state",
	gradCase{name: "init", attrs: Attrs{Offsets: raggedOffsets, Reverse: false},
		in: ins(randn(41, 8, 3), randn(42, 4, 3)), wrt: []int{0, 1}},
	gradCase{name: "reverse", attrs: Attrs{Offsets: raggedOffsets, Reverse: true},
		in: ins(randn(43, 8, 3)), wrt: []int{0}},
)

func sig(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// plainLSTMStep is the LSTM formula written out with the gate blocks of W,
// U and b in the documented order i, f, c, o (columns [0,H), [H,2H),
// [2H,3H), [3H,4H)) and peepholes i, f, o.
func plainLSTMStep(x, h, c []float64, w, u, b, p []float64, hid int, cand, cell func(float64) float64) (hn, cn []float64) {
	pre := func(gate, k int) float64 {
		col := gate*hid + k
		s := b[col]
		for a := range x {
			s += x[a] * w[a*4*hid+col]
		}
		for a := range h {
			s += h[a] * u[a*4*hid+col]
		}
		return s
	}
	hn, cn = make([]float64, hid), make([]float64, hid)
	for k := 0; k < hid; k++ {
		pi, pf, po := 0.0, 0.0, 0.0
		if p != nil {
			pi, pf, po = p[k], p[hid+k], p[2*hid+k]
		}
		i := sig(pre(0, k) + pi*c[k])
		f := sig(pre(1, k) + pf*c[k])
		g := cand(pre(2, k))
		cn[k] = f*c[k] + i*g
		o := sig(pre(3, k) + po*cn[k])
		hn[k] = o * cell(cn[k])
	}
	return hn, cn
}

// plainActs are the activations written out for plainLSTM.
var plainActs = map[RNNActivation]func(float64) float64{
	ActTanh: math.Tanh, ActSigmoid: sig, ActIdentity: func(x float64) float64 { return x },
	ActRelu: func(x float64) float64 { return math.Max(x, 0) },
}

// plainLSTM runs plainLSTMStep over each sequence alone and returns the
// [total, 2H] output the fused op documents, with candidate and cell
// activations cand and cell.
func plainLSTM(x, w, u, b, p, h0, c0 *tensor.Tensor, off []int, reverse bool, acts ...RNNActivation) *tensor.Tensor {
	cand, cell := math.Tanh, math.Tanh
	if len(acts) == 2 {
		cand, cell = plainActs[acts[0]], plainActs[acts[1]]
	}
	hid, nIn := u.Dim(0), x.Dim(1)
	out := tensor.Zeros(tensor.Float64, x.Dim(0), 2*hid)
	var pv []float64
	if p != nil {
		pv = p.Float64s()
	}
	for q := 0; q+1 < len(off); q++ {
		h, c := make([]float64, hid), make([]float64, hid)
		if h0 != nil {
			copy(h, h0.Float64s()[q*hid:])
			copy(c, c0.Float64s()[q*hid:])
		}
		for t := 0; t < off[q+1]-off[q]; t++ {
			r := off[q] + t
			if reverse {
				r = off[q+1] - 1 - t
			}
			h, c = plainLSTMStep(x.Float64s()[r*nIn:(r+1)*nIn], h, c, w.Float64s(), u.Float64s(), b.Float64s(), pv, hid, cand, cell)
			copy(out.Float64s()[r*2*hid:], h)
			copy(out.Float64s()[r*2*hid+hid:], c)
		}
	}
	return out
}

func TestLSTMGateOrderMatchesPlainCell(t *testing.T) {
	x, w, u, b := randn(1, 8, 3), randn(2, 3, 8), randn(3, 2, 8), randn(4, 8)
	p, h0, c0 := randn(5, 6), randn(6, 4, 2), randn(7, 4, 2)
	for _, tc := range []struct {
		name          string
		p, h0, c0     *tensor.Tensor
		reverse, cell bool
		acts          []RNNActivation
	}{
		{name: "plain"},
		{name: "peephole", p: p},
		{name: "init", h0: h0, c0: c0},
		{name: "all_reverse", p: p, h0: h0, c0: c0, reverse: true},
		{name: "relu_sigmoid", p: p, reverse: true, acts: []RNNActivation{ActRelu, ActSigmoid}},
		{name: "sigmoid_identity", h0: h0, c0: c0, acts: []RNNActivation{ActSigmoid, ActIdentity}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := LSTMAttrs{Offsets: raggedOffsets, Reverse: tc.reverse}
			if tc.acts != nil {
				a.Candidate, a.Cell = tc.acts[0], tc.acts[1]
			}
			got, err := LSTM(x, w, u, b, tc.p, tc.h0, tc.c0, a)
			require.NoError(t, err)
			requireClose(t, plainLSTM(x, w, u, b, tc.p, tc.h0, tc.c0, raggedOffsets, tc.reverse, tc.acts...), got, 1e-14, 1e-12)
			in := ins(x, w, u, b)
			if tc.p != nil {
				in = append(in, tc.p)
			}
			if tc.h0 != nil {
				in = append(in, tc.h0, tc.c0)
			}
			checkDTypes(t, func() Op { return LSTMOp(a) }, in...)
		})
	}
}

func TestLSTMCellIsOneStep(t *testing.T) {
	x, h, c := randn(1, 3, 4), randn(2, 3, 2), randn(3, 3, 2)
	w, u, b, p := randn(4, 4, 8), randn(5, 2, 8), randn(6, 8), randn(7, 6)
	got, err := LSTMCell(x, h, c, w, u, b, p)
	require.NoError(t, err)
	want := plainLSTM(x, w, u, b, p, h, c, []int{0, 1, 2, 3}, false)
	requireClose(t, want, got, 1e-14, 1e-12)
	checkDTypes(t, LSTMCellOp, x, h, c, w, u, b, p)
}

func TestRNNFinalState(t *testing.T) {
	states := tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 8, 1)
	init := tensor.MustFromSlice([]float64{-1, -2, -3, -4}, 4, 1)
	got, err := RNNFinalState(states, init, raggedOffsets, false)
	require.NoError(t, err)
	require.Equal(t, []float64{3, -2, 4, 8}, got.Float64s())
	got, err = RNNFinalState(states, nil, raggedOffsets, true)
	require.NoError(t, err)
	require.Equal(t, []float64{1, 0, 4, 5}, got.Float64s())
	_, err = RNNFinalState(states, tensor.Zeros(tensor.Float64, 3, 1), raggedOffsets, false)
	require.ErrorContains(t, err, "rnn_final_state: inputs float64[8 1], float64[3 1]: want init [4 1]")
}

func TestLSTMErrors(t *testing.T) {
	x, w, u, b := randn(1, 8, 3), randn(2, 3, 8), randn(3, 2, 8), randn(4, 8)
	for _, tc := range []struct {
		name   string
		in     []*tensor.Tensor
		off    []int
		substr string
	}{
		{"decreasing offsets", ins(x, w, u, b), []int{0, 3, 2, 8}, "offsets [0 3 2 8] decrease at 2: 2 after 3"},
		{"overrun offsets", ins(x, w, u, b), []int{0, 3, 9}, "offset 2 is 9 but the values have 8 rows"},
		{"short offsets", ins(x, w, u, b), []int{0, 3, 7}, "end at 7 but the values have 8 rows"},
		{"no offsets", ins(x, w, u, b), nil, "must start at 0"},
		{"w rows", ins(x, randn(2, 4, 8), u, b), raggedOffsets, "lstm: inputs float64[8 3], float64[4 8], float64[2 8], float64[8]: want x [rows, In] and W [In, 4H]"},
		{"w cols", ins(x, randn(2, 3, 7), u, b), raggedOffsets, "W [In, 4H]"},
		{"u shape", ins(x, w, randn(3, 2, 4), b), raggedOffsets, "want U [2 8]"},
		{"bias", ins(x, w, u, randn(4, 6)), raggedOffsets, "want bias [8]"},
		{"peephole", ins(x, w, u, b, randn(5, 4)), raggedOffsets, "want peephole [6]"},
		{"h0", ins(x, w, u, b, randn(6, 3, 2), randn(7, 3, 2)), raggedOffsets, "want states h, c [4 2] for a batch of 4"},
		{"dtype", ins(x, f32(w), u, b), raggedOffsets, "want float32 or float64 inputs of one dtype"},
		{"arity", ins(x, w, u), raggedOffsets, "want inputs x, W, U, b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LSTMOp(LSTMAttrs{Offsets: tc.off}).Forward(tc.in)
			require.ErrorContains(t, err, "lstm: inputs")
			require.ErrorContains(t, err, tc.substr)
		})
	}
	_, err := LSTMCell(randn(1, 3, 4), randn(2, 2, 2), randn(3, 3, 2), randn(4, 4, 8), randn(5, 2, 8), randn(6, 8), nil)
	require.ErrorContains(t, err, "lstm_cell: inputs float64[3 4], float64[2 2]")
	require.ErrorContains(t, err, "want states h, c [3 2] for a batch of 3")
}

func TestLSTMEmptyBatch(t *testing.T) {
	out, err := LSTM(tensor.Zeros(tensor.Float32, 0, 3), f32(randn(2, 3, 8)), f32(randn(3, 2, 8)), f32(randn(4, 8)), nil, nil, nil, LSTMAttrs{Offsets: []int{0, 0, 0}})
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{0, 4}, out.Shape())
}

var _ = addGradCases("lstm_projected",
	gradCase{name: "peephole", attrs: Attrs{Offsets: raggedOffsets},
		in: ins(randn(51, 8, 8), randn(52, 2, 8), randn(53, 8), randn(54, 6)), wrt: []int{0, 1, 2, 3}},
	gradCase{name: "reverse", attrs: Attrs{Offsets: raggedOffsets, Reverse: true},
		in: ins(randn(55, 8, 12), randn(56, 3, 12), randn(57, 12)), wrt: []int{0, 1, 2}},
)

// TestLSTMProjectedIsLSTMOfProjections: the projected LSTM on x·W gives
// the fused LSTM's output on x, in both directions and dtypes, with and
// without peepholes; bad inputs are errors naming the op.
func TestLSTMProjectedIsLSTMOfProjections(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		for _, rev := range []bool{false, true} {
			for _, peep := range []bool{false, true} {
				cast := func(x *tensor.Tensor) *tensor.Tensor { c, _ := x.Cast(dt); return c }
				x, w, u, b, p := cast(randn(61, 8, 3)), cast(randn(62, 3, 8)), cast(randn(63, 2, 8)), cast(randn(64, 8)), cast(randn(65, 6))
				if !peep {
					p = nil
				}
				attrs := LSTMAttrs{Offsets: raggedOffsets, Reverse: rev}
				want, err := LSTM(x, w, u, b, p, nil, nil, attrs)
				require.NoError(t, err)
				xw, err := MatMul(x, w, false, false)
				require.NoError(t, err)
				got, err := LSTMProjected(xw, u, b, p, attrs)
				require.NoError(t, err)
				tol := 1e-12
				if dt == tensor.Float32 {
					tol = 2e-6
				}
				requireClose(t, want, got, tol, tol)
			}
		}
	}
	_, err := LSTMProjected(randn(1, 8, 6), randn(2, 2, 8), randn(3, 8), nil, LSTMAttrs{Offsets: raggedOffsets})
	require.ErrorContains(t, err, "lstm_projected")
	require.ErrorContains(t, err, "want x [rows, 4H]")
	_, err = run(LSTMProjectedOp(LSTMAttrs{Offsets: raggedOffsets}), randn(1, 8, 8), randn(2, 2, 8))
	require.ErrorContains(t, err, "want inputs x, U, b and optional peephole")
}

func TestLSTMUnknownActivation(t *testing.T) {
	_, err := LSTM(randn(1, 8, 3), randn(2, 3, 8), randn(3, 2, 8), randn(4, 8), nil, nil, nil, LSTMAttrs{Offsets: raggedOffsets, Cell: 9})
	require.ErrorContains(t, err, "lstm: inputs float64[8 3], float64[3 8], float64[2 8], float64[8]: unknown activations tanh, RNNActivation(9)")
}
