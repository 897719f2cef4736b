package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("group_norm",
	gradCase{name: "nchw_2groups", attrs: Attrs{NumGroups: 2, Epsilon: 1e-5}, in: ins(randn(1, 2, 4, 3, 2), randu(2, 0.5, 1.5, 4), randn(3, 4)), wrt: []int{0, 1, 2}},
	gradCase{name: "rank2_one_group", attrs: Attrs{NumGroups: 1, Epsilon: 1e-3}, in: ins(randn(4, 3, 6), randu(5, 0.5, 1.5, 6), randn(6, 6)), wrt: []int{0, 1, 2}},
	gradCase{name: "rank3_per_channel", attrs: Attrs{NumGroups: 3, Epsilon: 0.1}, in: ins(randn(7, 2, 3, 5), randu(8, -1.5, 1.5, 3), randn(9, 3)), wrt: []int{0, 1, 2}},
)

// naiveGroupNorm normalises each (sample, group) block of x [N, C, ...]
// with the mean and biased variance taken by plain loops in float64.
func naiveGroupNorm(x, scale, bias *tensor.Tensor, groups int, eps float64) *tensor.Tensor {
	n, c := x.Dim(0), x.Dim(1)
	spatial := x.Shape()[2:].Size()
	cpg := c / groups
	y := tensor.Zeros(tensor.Float64, x.Shape()...)
	for s := 0; s < n; s++ {
		for g := 0; g < groups; g++ {
			var vals []float64
			for ch := g * cpg; ch < (g+1)*cpg; ch++ {
				for p := 0; p < spatial; p++ {
					vals = append(vals, x.At((s*c+ch)*spatial+p))
				}
			}
			mean, v := 0.0, 0.0
			for _, e := range vals {
				mean += e / float64(len(vals))
			}
			for _, e := range vals {
				v += (e - mean) * (e - mean) / float64(len(vals))
			}
			for ch := g * cpg; ch < (g+1)*cpg; ch++ {
				for p := 0; p < spatial; p++ {
					i := (s*c+ch)*spatial + p
					y.Float64s()[i] = scale.At(ch)*(x.At(i)-mean)/math.Sqrt(v+eps) + bias.At(ch)
				}
			}
		}
	}
	return y
}

func TestGroupNormMatchesNaive(t *testing.T) {
	for i, c := range []struct {
		shape  []int
		groups int
		eps    float64
	}{
		{[]int{2, 4, 3, 3}, 2, 1e-5},
		{[]int{1, 6, 5}, 3, 1e-5},
		{[]int{3, 5}, 5, 1e-3},
		{[]int{3, 5}, 1, 1e-3},
		{[]int{2, 6, 7, 1, 3}, 6, 1e-5},
		{[]int{2, 8, 33, 17}, 4, 1e-5},
		{[]int{1, 2, 0, 3}, 1, 1e-5},
		{[]int{0, 4, 2}, 2, 1e-5},
	} {
		x := randn(uint64(3*i+1), c.shape...)
		scale, bias := randu(uint64(3*i+2), -2, 2, c.shape[1]), randn(uint64(3*i+3), c.shape[1])
		got, err := GroupNorm(x, scale, bias, c.groups, c.eps)
		require.NoError(t, err, "case %d", i)
		requireClose(t, naiveGroupNorm(x, scale, bias, c.groups, c.eps), got, 1e-12, 1e-12)
		checkDTypes(t, func() Op { return GroupNormOp(GroupNormAttrs{NumGroups: c.groups, Epsilon: c.eps}) }, x, scale, bias)
	}
}

// TestGroupNormGradMatchesFloat32 runs Backward in both dtypes on one
// shape large enough to split over the cores and requires them to agree;
// the float64 numeric checks are the gradient cases above.
func TestGroupNormGradMatchesFloat32(t *testing.T) {
	x, scale, bias := randn(1, 4, 8, 9, 9), randu(2, 0.5, 1.5, 8), randn(3, 8)
	gout := randn(4, 4, 8, 9, 9)
	var res [2][]*tensor.Tensor
	for k, f := range []func(*tensor.Tensor) *tensor.Tensor{func(t *tensor.Tensor) *tensor.Tensor { return t }, f32} {
		op := GroupNormOp(GroupNormAttrs{NumGroups: 4, Epsilon: 1e-5})
		in := ins(f(x), f(scale), f(bias))
		out, err := op.Forward(in)
		require.NoError(t, err)
		res[k], err = op.Backward(in, out, f(gout), []bool{true, true, true})
		require.NoError(t, err)
	}
	for i := range 3 {
		requireClose(t, res[0][i], res[1][i], 1e-4, 1e-4)
	}
}

func TestGroupNormErrors(t *testing.T) {
	x, c4 := tensor.Zeros(tensor.Float32, 2, 4, 3), tensor.Zeros(tensor.Float32, 4)
	for _, c := range []struct {
		in     []*tensor.Tensor
		groups int
		eps    float64
		want   string
	}{
		{ins(x, c4, c4), 3, 1e-5, "group_norm: inputs float32[2 4 3], float32[4], float32[4]: num_groups 3 must be positive and divide the 4 channels"},
		{ins(x, c4, c4), 0, 1e-5, "num_groups 0 must be positive"},
		{ins(x, c4, c4), -2, 1e-5, "num_groups -2 must be positive"},
		{ins(x, c4, c4), 2, 0, "group_norm: inputs float32[2 4 3], float32[4], float32[4]: epsilon 0 must be positive and finite (ONNX's and PyTorch's default is 1e-05)"},
		{ins(x, c4, c4), 2, math.Inf(1), "epsilon +Inf must be positive"},
		{ins(x, tensor.Zeros(tensor.Float32, 2), c4), 2, 1e-5, "group_norm: inputs float32[2 4 3], float32[2], float32[4]: want scale and bias of shape [4], one per channel"},
		{ins(tensor.Zeros(tensor.Float32, 4), c4, c4), 2, 1e-5, "group_norm: inputs float32[4], float32[4], float32[4]: want x of rank >= 2, [N, C, spatial...]"},
		{ins(x, tensor.Zeros(tensor.Float64, 4), c4), 2, 1e-5, "want float32 or float64 inputs of one dtype"},
		{ins(x, c4), 2, 1e-5, "group_norm"},
	} {
		var err error
		if len(c.in) == 3 {
			_, err = GroupNorm(c.in[0], c.in[1], c.in[2], c.groups, c.eps)
		} else {
			_, err = run(GroupNormOp(GroupNormAttrs{NumGroups: c.groups, Epsilon: c.eps}), c.in...)
		}
		require.ErrorContains(t, err, c.want)
	}
}
