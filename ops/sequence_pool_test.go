package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var seqPoolTypes = []SequencePoolType{SequencePoolSum, SequencePoolAverage, SequencePoolSqrt, SequencePoolMax, SequencePoolFirst, SequencePoolLast}

func addSequencePoolGradCases() bool {
	for _, kind := range seqPoolTypes {
		addGradCases("sequence_pool",
			gradCase{name: string(kind), attrs: Attrs{Pool: kind, Pad: 0, Offsets: mixedOffsets}, in: ins(randn(1, 10, 3)), wrt: []int{0}},
			gradCase{name: string(kind) + "_rank3_pad", attrs: Attrs{Pool: kind, Pad: -2, Offsets: []int{0, 0, 2, 3}}, in: ins(randn(2, 3, 2, 2)), wrt: []int{0}},
		)
	}
	return true
}

var _ = addSequencePoolGradCases()

// plainPool pools rows (one sequence) by the textbook formula.
func plainPool(kind SequencePoolType, rows [][]float64, inner int, pad float64) []float64 {
	out := make([]float64, inner)
	for c := range out {
		if len(rows) == 0 {
			out[c] = pad
			continue
		}
		col := make([]float64, len(rows))
		for r := range rows {
			col[r] = rows[r][c]
		}
		sum := 0.0
		for _, v := range col {
			sum += v
		}
		switch kind {
		case SequencePoolSum:
			out[c] = sum
		case SequencePoolAverage:
			out[c] = sum / float64(len(col))
		case SequencePoolSqrt:
			out[c] = sum / math.Sqrt(float64(len(col)))
		case SequencePoolMax:
			out[c] = math.Inf(-1)
			for _, v := range col {
				out[c] = math.Max(out[c], v)
			}
		case SequencePoolFirst:
			out[c] = col[0]
		case SequencePoolLast:
			out[c] = col[len(col)-1]
		}
	}
	return out
}

func TestSequencePoolForward(t *testing.T) {
	x := randn(3, 10, 4)
	for _, kind := range seqPoolTypes {
		for _, pad := range []float64{0, 1.5} {
			got, err := SequencePool(x, mixedOffsets, kind, pad)
			require.NoError(t, err)
			var want [][]float64
			for b := 0; b+1 < len(mixedOffsets); b++ {
				want = append(want, plainPool(kind, seqRows(x, mixedOffsets, b), 4, pad))
			}
			requireClose(t, fromRows(want, 4), got, 1e-14, 1e-13)
			checkDTypes(t, func() Op { return SequencePoolOp(kind, pad, mixedOffsets) }, x)
		}
	}
}

// Max sends the gradient to the first of tied maxima; an empty sequence
// gets none however the pad is set.
func TestSequencePoolMaxTiesAndEmptyGrad(t *testing.T) {
	x := tensor.MustFromSlice([]float64{1, 5, 3, 5, 2, 7}, 3, 2)
	off := []int{0, 0, 3}
	op := SequencePoolOp(SequencePoolMax, 9, off)
	y, err := op.Forward(ins(x))
	require.NoError(t, err)
	require.Equal(t, []float64{9, 9, 3, 7}, y.Float64s())
	g, err := op.Backward(ins(x), y, tensor.MustFromSlice([]float64{10, 20, 1, 2}, 2, 2), []bool{true})
	require.NoError(t, err)
	require.Equal(t, []float64{0, 0, 1, 0, 0, 2}, g[0].Float64s())
	x = tensor.MustFromSlice([]float64{4, 4, 4}, 3, 1)
	op = SequencePoolOp(SequencePoolMax, 0, []int{0, 3})
	y, err = op.Forward(ins(x))
	require.NoError(t, err)
	g, err = op.Backward(ins(x), y, tensor.MustFromSlice([]float64{1}, 1, 1), []bool{true})
	require.NoError(t, err)
	require.Equal(t, []float64{1, 0, 0}, g[0].Float64s())
}

func TestSequencePoolErrors(t *testing.T) {
	_, err := SequencePool(randn(1, 4, 2), []int{0, 4}, "median", 0)
	require.ErrorContains(t, err, `sequence_pool: inputs float64[4 2]: unknown pool type "median"`)
	_, err = SequencePool(tensor.Zeros(tensor.Int64, 4, 2), []int{0, 4}, SequencePoolSum, 0)
	require.ErrorContains(t, err, "sequence_pool: inputs int64[4 2]: want float32 or float64")
	_, err = SequencePool(tensor.Scalar(1.0), []int{0}, SequencePoolSum, 0)
	require.ErrorContains(t, err, "sequence_pool: inputs float64[]: want x [total, D...] of rank >= 1")
	// An empty batch pools to [0, D].
	y, err := SequencePool(tensor.Zeros(tensor.Float32, 0, 3), []int{0}, SequencePoolMax, 0)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{0, 3}, y.Shape())
}

// TestSequencePoolMaxLong runs max pooling on long sequences of an odd
// width against the plain reference, forward and in where the gradient
// lands (each column's first maximum), in float64 and float32; values are
// rounded to a coarse grid so columns hold ties.
func TestSequencePoolMaxLong(t *testing.T) {
	off := []int{0, 1, 300, 300, 517, 613}
	const inner = 37
	x := randn(5, off[len(off)-1], inner)
	for i, v := range x.Float64s() {
		x.Float64s()[i] = float64(int(v*4)) / 4
	}
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		xt, err := x.Cast(dt)
		require.NoError(t, err)
		op := SequencePoolOp(SequencePoolMax, 0, off)
		y, err := op.Forward(ins(xt))
		require.NoError(t, err)
		var want [][]float64
		for b := 0; b+1 < len(off); b++ {
			want = append(want, plainPool(SequencePoolMax, seqRows(x, off, b), inner, 0))
		}
		requireClose(t, fromRows(want, inner), y, 0, 0)
		gy, err := tensor.Ones(dt, len(off)-1, inner)
		require.NoError(t, err)
		g, err := op.Backward(ins(xt), y, gy, []bool{true})
		require.NoError(t, err)
		wantG := make([]float64, x.Size())
		for b := 0; b+1 < len(off); b++ {
			for c := 0; c < inner; c++ {
				best := -1
				for r := off[b]; r < off[b+1]; r++ {
					if best < 0 || x.Float64s()[r*inner+c] > x.Float64s()[best*inner+c] {
						best = r
					}
				}
				if best >= 0 {
					wantG[best*inner+c] = 1
				}
			}
		}
		requireClose(t, tensor.MustFromSlice(wantG, x.Shape()...), g[0], 0, 0)
	}
}
