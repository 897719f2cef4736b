package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addBinaryGradCases()

func addBinaryGradCases() bool {
	shapes := []struct {
		name string
		a, b []int
	}{
		{"same", []int{2, 3}, []int{2, 3}},
		{"row", []int{2, 3}, []int{3}},
		{"col", []int{4, 1}, []int{1, 3}},
		{"scalar", []int{}, []int{2, 2}},
	}
	for name := range binaryFns {
		for i, s := range shapes {
			a, b := randn(uint64(10+i), s.a...), randn(uint64(20+i), s.b...)
			if name == "pow" || name == "div" { // keep base positive and divisor away from 0
				a, b = randu(uint64(10+i), 0.5, 2, s.a...), randu(uint64(20+i), 0.5, 2, s.b...)
			}
			addGradCases(name, gradCase{name: s.name, attrs: Attrs{}, in: ins(a, b), wrt: []int{0, 1}})
		}
	}
	return true
}

func TestBinaryForward(t *testing.T) {
	a := tensor.MustFromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	b := tensor.MustFromSlice([]float64{10, 20, 30}, 3)
	cases := []struct {
		op   string
		want []float64
	}{
		{"add", []float64{11, 22, 33, 14, 25, 36}},
		{"sub", []float64{-9, -18, -27, -6, -15, -24}},
		{"mul", []float64{10, 40, 90, 40, 100, 180}},
		{"div", []float64{0.1, 0.1, 0.1, 0.4, 0.25, 0.2}},
		{"maximum", []float64{10, 20, 30, 10, 20, 30}},
		{"minimum", []float64{1, 2, 3, 4, 5, 6}},
	}
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			got, err := BinaryOp(c.op).Forward(ins(a, b))
			require.NoError(t, err)
			requireClose(t, tensor.MustFromSlice(c.want, 2, 3), got, 1e-12, 1e-12)
			checkDTypes(t, func() Op { return BinaryOp(c.op) }, a, b)
		})
	}
}

func TestBinaryErrors(t *testing.T) {
	a := tensor.Zeros(tensor.Float32, 2, 3)
	_, err := Add(a, tensor.Zeros(tensor.Float32, 4))
	require.ErrorContains(t, err, "add: inputs float32[2 3], float32[4]")
	_, err = Mul(a, tensor.Zeros(tensor.Float64, 2, 3))
	require.ErrorContains(t, err, "mul")
	require.ErrorContains(t, err, "one dtype")
}

func TestMaximumTieGoesToA(t *testing.T) {
	a := tensor.MustFromSlice([]float64{1, 2}, 2)
	op := BinaryOp("maximum")
	y, err := op.Forward(ins(a, a))
	require.NoError(t, err)
	g, err := op.Backward(ins(a, a), y, tensor.MustFromSlice([]float64{1, 1}, 2), []bool{true, true})
	require.NoError(t, err)
	require.Equal(t, []float64{1, 1}, g[0].Float64s())
	require.Equal(t, []float64{0, 0}, g[1].Float64s())
}
