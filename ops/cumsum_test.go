package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("cumsum",
	gradCase{name: "axis0", attrs: Attrs{Axis: 0}, in: ins(randn(1, 4, 3)), wrt: []int{0}},
	gradCase{name: "exclusive", attrs: Attrs{Axis: 1, Exclusive: true}, in: ins(randn(2, 2, 5, 3)), wrt: []int{0}},
	gradCase{name: "reverse", attrs: Attrs{Axis: -1, Reverse: true}, in: ins(randn(3, 3, 4)), wrt: []int{0}},
	gradCase{name: "exclusive_reverse", attrs: Attrs{Axis: -2, Exclusive: true, Reverse: true}, in: ins(randn(4, 2, 3, 2)), wrt: []int{0}},
)

// naiveCumSum sums, for each output element, the elements of its line
// along axis that the definition selects, in float64.
func naiveCumSum(x *tensor.Tensor, ax int, exclusive, reverse bool) *tensor.Tensor {
	s := x.Shape()
	st := s.Strides()
	y := tensor.Zeros(tensor.Float64, s...)
	for p := range x.Size() {
		i := (p / st[ax]) % s[ax]
		start := p - i*st[ax]
		sum := 0.0
		for j := range s[ax] {
			take := j <= i
			switch {
			case exclusive && reverse:
				take = j > i
			case exclusive:
				take = j < i
			case reverse:
				take = j >= i
			}
			if take {
				sum += x.At(start + j*st[ax])
			}
		}
		y.Float64s()[p] = sum
	}
	return y
}

func TestCumSumMatchesNaive(t *testing.T) {
	for i, c := range []struct {
		shape []int
		axis  int
	}{
		{[]int{7}, 0},
		{[]int{3, 5}, 1},
		{[]int{3, 5}, -2},
		{[]int{2, 7, 3}, 1},
		{[]int{4, 1, 3, 5}, -1},
		{[]int{3, 0, 2}, 2},
		{[]int{1, 9, 1}, 1},
	} {
		x := randn(uint64(i+1), c.shape...)
		ax := c.axis
		if ax < 0 {
			ax += len(c.shape)
		}
		for _, f := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			a := CumSumAttrs{Axis: c.axis, Exclusive: f[0], Reverse: f[1]}
			got, err := CumSum(x, a)
			require.NoError(t, err, "case %d %+v", i, a)
			requireClose(t, naiveCumSum(x, ax, f[0], f[1]), got, 1e-12, 1e-12)
			checkDTypes(t, func() Op { return CumSumOp(a) }, x)
		}
	}
}

func TestCumSumSmallExample(t *testing.T) {
	// ONNX CumSum's examples on [1, 2, 3, 4, 5].
	x := tensor.MustFromSlice([]float32{1, 2, 3, 4, 5}, 5)
	for _, c := range []struct {
		a    CumSumAttrs
		want []float32
	}{
		{CumSumAttrs{}, []float32{1, 3, 6, 10, 15}},
		{CumSumAttrs{Exclusive: true}, []float32{0, 1, 3, 6, 10}},
		{CumSumAttrs{Reverse: true}, []float32{15, 14, 12, 9, 5}},
		{CumSumAttrs{Exclusive: true, Reverse: true}, []float32{14, 12, 9, 5, 0}},
	} {
		got, err := CumSum(x, c.a)
		require.NoError(t, err)
		require.Equal(t, c.want, got.Float32s(), "%+v", c.a)
	}
	// The gradient of the inclusive sum is the reverse sum of gout.
	op := CumSumOp(CumSumAttrs{})
	out, err := op.Forward(ins(x))
	require.NoError(t, err)
	g, err := op.Backward(ins(x), out, tensor.MustFromSlice([]float32{1, 10, 100, 1000, 10000}, 5), []bool{true})
	require.NoError(t, err)
	require.Equal(t, []float32{11111, 11110, 11100, 11000, 10000}, g[0].Float32s())
}

func TestCumSumErrors(t *testing.T) {
	for _, c := range []struct {
		x    *tensor.Tensor
		axis int
		want string
	}{
		{tensor.Zeros(tensor.Int64, 3), 0, "cumsum: inputs int64[3]: want float32 or float64 x"},
		{tensor.Scalar(float32(1)), 0, "cumsum: inputs float32[]: want x of rank >= 1"},
		{tensor.Zeros(tensor.Float32, 2, 3), 2, "cumsum: inputs float32[2 3]: axis 2 out of range for rank 2"},
		{tensor.Zeros(tensor.Float32, 2, 3), -3, "axis -3 out of range for rank 2"},
		{nil, 0, "cumsum"},
	} {
		_, err := CumSum(c.x, CumSumAttrs{Axis: c.axis})
		require.ErrorContains(t, err, c.want)
	}
}
