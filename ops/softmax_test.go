package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("softmax",
	gradCase{name: "last", attrs: Attrs{Axis: -1}, in: ins(randn(1, 3, 4)), wrt: []int{0}},
	gradCase{name: "middle", attrs: Attrs{Axis: 1}, in: ins(randn(2, 2, 3, 4)), wrt: []int{0}},
	gradCase{name: "first", attrs: Attrs{Axis: 0}, in: ins(randn(3, 3, 2)), wrt: []int{0}},
)

// plainSoftmax is exp(x)/Σexp(x) with no shift, for moderate test inputs.
func plainSoftmax(row []float64) []float64 {
	s := 0.0
	for _, v := range row {
		s += math.Exp(v)
	}
	out := make([]float64, len(row))
	for i, v := range row {
		out[i] = math.Exp(v) / s
	}
	return out
}

// plainAlongAxis applies f to every lane of x [outer, n, inner] along its
// middle axis, gathering and scattering the lane by index arithmetic.
func plainAlongAxis(x *tensor.Tensor, axis int, f func([]float64) []float64) *tensor.Tensor {
	s := x.Shape()
	outer, n, inner := s[:axis].Size(), s[axis], s[axis+1:].Size()
	out := tensor.Zeros(tensor.Float64, s...)
	for o := 0; o < outer; o++ {
		for i := 0; i < inner; i++ {
			lane := make([]float64, n)
			for k := range lane {
				lane[k] = x.At((o*n+k)*inner + i)
			}
			for k, v := range f(lane) {
				out.SetAt((o*n+k)*inner+i, v)
			}
		}
	}
	return out
}

func TestSoftmaxForward(t *testing.T) {
	x := randn(5, 2, 3, 4)
	for _, axis := range []int{0, 1, 2} {
		got, err := Softmax(x, axis)
		require.NoError(t, err)
		requireClose(t, plainAlongAxis(x, axis, plainSoftmax), got, 1e-15, 1e-12)
		checkDTypes(t, func() Op { return SoftmaxOp(axis) }, x)
	}
	got, err := Softmax(x, -1)
	require.NoError(t, err)
	requireClose(t, plainAlongAxis(x, 2, plainSoftmax), got, 1e-15, 1e-12)
}

func TestSoftmaxRowsSumToOne(t *testing.T) {
	y, err := Softmax(randn(6, 5, 7), -1)
	require.NoError(t, err)
	for r := range 5 {
		s := 0.0
		for _, v := range y.Float64s()[r*7 : (r+1)*7] {
			s += v
		}
		require.InDelta(t, 1, s, 1e-12)
	}
}

func TestSoftmaxLargeLogitsStayFinite(t *testing.T) {
	e := math.E
	for _, x := range []*tensor.Tensor{
		tensor.MustFromSlice([]float32{1000, 1001}, 1, 2),
		tensor.MustFromSlice([]float64{1000, 1001}, 1, 2),
	} {
		y, err := Softmax(x, -1)
		require.NoError(t, err)
		requireClose(t, tensor.MustFromSlice([]float64{1 / (1 + e), e / (1 + e)}, 1, 2), y, 1e-7, 1e-6)
		require.InDelta(t, 1, y.At(0)+y.At(1), 1e-6)
	}
}

func TestSoftmaxGradMatchesFormula(t *testing.T) {
	// For y = softmax(x), dx_i = y_i·(dy_i - Σ_j dy_j·y_j), written out.
	x := tensor.MustFromSlice([]float64{0.5, -1, 2}, 3)
	dy := tensor.MustFromSlice([]float64{1, 0, -2}, 3)
	op := SoftmaxOp(-1)
	y, err := op.Forward(ins(x))
	require.NoError(t, err)
	g, err := op.Backward(ins(x), y, dy, []bool{true})
	require.NoError(t, err)
	p := plainSoftmax(x.Float64s())
	dot := p[0]*1 + p[2]*-2
	want := []float64{p[0] * (1 - dot), p[1] * (0 - dot), p[2] * (-2 - dot)}
	requireClose(t, tensor.MustFromSlice(want, 3), g[0], 1e-15, 1e-12)
}

func TestSoftmaxErrors(t *testing.T) {
	_, err := Softmax(tensor.Zeros(tensor.Float32, 2, 3), 2)
	require.ErrorContains(t, err, "softmax: inputs float32[2 3]")
	require.ErrorContains(t, err, "axis 2 out of range")
	_, err = Softmax(tensor.Zeros(tensor.Int32, 2, 3), -1)
	require.ErrorContains(t, err, "softmax: inputs int32[2 3]")
	_, err = Softmax(tensor.Zeros(tensor.Float32), -1)
	require.ErrorContains(t, err, "softmax: inputs float32[]")
}

// A NaN anywhere in a row makes that row's softmax, log-softmax and
// cross-entropy NaN, and leaves the other row alone.
func TestSoftmaxNaNRow(t *testing.T) {
	for _, at := range []int{0, 4, 8} {
		x := make([]float32, 2*9)
		for i := range x {
			x[i] = float32(i % 5)
		}
		x[at] = float32(math.NaN())
		logits := tensor.MustFromSlice(x, 2, 9)
		sm, err := Softmax(logits, -1)
		require.NoError(t, err)
		lsm, err := LogSoftmax(logits, -1)
		require.NoError(t, err)
		xent, err := SoftmaxCrossEntropy(logits, tensor.MustFromSlice([]int64{1, 2}, 2), LossNone)
		require.NoError(t, err)
		for _, y := range []*tensor.Tensor{sm, lsm} {
			for i, v := range y.Float32s() {
				assert.Equal(t, i < 9, math.IsNaN(float64(v)), "NaN at %d: element %d is %v", at, i, v)
			}
		}
		assert.True(t, math.IsNaN(xent.At(0)), "NaN at %d: row 0's loss %v", at, xent.At(0))
		assert.False(t, math.IsNaN(xent.At(1)), "NaN at %d: row 1's loss", at)
	}
}
