package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// offZero returns randn(seed, shape) with entries near 0, prelu's kink,
// moved to 0.1 so central differences stay on one side.
func offZero(seed uint64, shape ...int) *tensor.Tensor {
	x := randn(seed, shape...)
	for i, v := range x.Float64s() {
		if v > -1e-3 && v < 1e-3 {
			x.Float64s()[i] = 0.1
		}
	}
	return x
}

var _ = addGradCases("prelu",
	gradCase{name: "same", in: ins(offZero(1, 3, 4), randu(2, 0.1, 0.5, 3, 4)), wrt: []int{0, 1}},
	gradCase{name: "channel", in: ins(offZero(3, 2, 3, 5), randu(4, 0.1, 0.5, 3, 1)), wrt: []int{0, 1}},
	gradCase{name: "last_axis", in: ins(offZero(5, 2, 3, 5), randn(6, 5)), wrt: []int{0, 1}},
	gradCase{name: "scalar_slope", in: ins(offZero(7, 3, 4), tensor.MustFromSlice([]float64{0.25})), wrt: []int{0, 1}},
)

// preluRef is prelu written index by index: slope's element for output
// position o is found by dropping o's coordinates on slope's size-1 and
// missing axes.
func preluRef(x, slope *tensor.Tensor, gout *tensor.Tensor) (y, gx, gs *tensor.Tensor) {
	xs, ss := x.Shape(), slope.Shape()
	y = tensor.Zeros(tensor.Float64, xs...)
	gx = tensor.Zeros(tensor.Float64, xs...)
	gs = tensor.Zeros(tensor.Float64, ss...)
	idx := make([]int, len(xs))
	for o := range x.Size() {
		r := o
		for a := len(xs) - 1; a >= 0; a-- {
			idx[a] = r % xs[a]
			r /= xs[a]
		}
		p := 0
		for i, d := range ss {
			c := idx[len(xs)-len(ss)+i]
			if d == 1 {
				c = 0
			}
			p = p*d + c
		}
		v, s, g := x.At(o), slope.At(p), gout.At(o)
		if v > 0 {
			y.Float64s()[o] = v
			gx.Float64s()[o] = g
		} else {
			y.Float64s()[o] = s * v
			gx.Float64s()[o] = g * s
			gs.Float64s()[p] += g * v
		}
	}
	return y, gx, gs
}

// prelu and both its gradients match preluRef on odd shapes, with slope
// broadcast along leading, middle and missing axes, in both dtypes.
func TestPReluMatchesReference(t *testing.T) {
	for _, c := range []struct {
		name string
		x, s tensor.Shape
	}{
		{"same", tensor.Shape{3, 5}, tensor.Shape{3, 5}},
		{"channel_nchw", tensor.Shape{2, 3, 5, 7}, tensor.Shape{3, 1, 1}},
		{"last_axis", tensor.Shape{2, 3, 7}, tensor.Shape{7}},
		{"middle", tensor.Shape{3, 5, 7}, tensor.Shape{1, 5, 1}},
		{"scalar", tensor.Shape{5, 3}, tensor.Shape{}},
		{"one", tensor.Shape{5, 3}, tensor.Shape{1}},
		{"rank0", tensor.Shape{}, tensor.Shape{}},
		{"empty", tensor.Shape{0, 3}, tensor.Shape{3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := randn(51, c.x...)
			s := randn(52, c.s...)
			gout := randn(53, c.x...)
			wy, wgx, wgs := preluRef(x, s, gout)
			for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
				xt, st, gt, tol := x, s, gout, 1e-12
				if dt == tensor.Float32 {
					xt, st, gt, tol = f32(x), f32(s), f32(gout), 1e-5
				}
				y, err := PRelu(xt, st)
				require.NoError(t, err)
				require.Equal(t, dt, y.DType())
				requireClose(t, wy, y, tol, tol)
				g, err := PReluOp().Backward(ins(xt, st), y, gt, []bool{true, true})
				require.NoError(t, err)
				requireClose(t, wgx, g[0], tol, tol)
				requireClose(t, wgs, g[1], tol, tol)
				only, err := PReluOp().Backward(ins(xt, st), y, gt, []bool{false, true})
				require.NoError(t, err)
				require.Nil(t, only[0])
				requireClose(t, wgs, only[1], tol, tol)
			}
		})
	}
}

// At x = 0 prelu is 0 and, as leaky_relu, passes gout·slope to x and 0 to
// the slope (x·gout); positive x ignores the slope.
func TestPReluAtZero(t *testing.T) {
	x := tensor.MustFromSlice([]float64{0, 2, -2}, 3)
	s := tensor.MustFromSlice([]float64{0.25}, 1)
	y, err := PRelu(x, s)
	require.NoError(t, err)
	require.Equal(t, []float64{0, 2, -0.5}, y.Float64s())
	g, err := PReluOp().Backward(ins(x, s), y, tensor.MustFromSlice([]float64{1, 1, 1}, 3), []bool{true, true})
	require.NoError(t, err)
	require.Equal(t, []float64{0.25, 1, 0.25}, g[0].Float64s())
	require.Equal(t, []float64{-2}, g[1].Float64s())
}

func TestPReluErrors(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 2, 3)
	for _, c := range []struct {
		name string
		in   []*tensor.Tensor
		want string
	}{
		{"slope axis mismatch", ins(x, tensor.Zeros(tensor.Float32, 2)), "slope axis 0 has size 2, want 1 or x's 3"},
		{"slope rank", ins(x, tensor.Zeros(tensor.Float32, 1, 2, 3)), "slope has 3 axes, want at most x's 2"},
		{"dtypes", ins(x, tensor.Zeros(tensor.Float64, 3)), "want float32 or float64 inputs of one dtype"},
		{"ints", ins(tensor.Zeros(tensor.Int64, 2, 3), tensor.Zeros(tensor.Int64, 3)), "want float32 or float64"},
		{"arity", ins(x), "prelu"},
		{"nil slope", ins(x, nil), "prelu"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Run(PReluOp(), c.in...)
			require.ErrorContains(t, err, c.want)
			require.ErrorContains(t, err, "prelu")
		})
	}
}
