package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("instance_norm",
	gradCase{name: "nchw", attrs: Attrs{Epsilon: 1e-5}, in: ins(randn(1, 2, 3, 3, 2), randu(2, 0.5, 1.5, 3), randn(3, 3)), wrt: []int{0, 1, 2}},
	gradCase{name: "ncl", attrs: Attrs{Epsilon: 0.01}, in: ins(randn(4, 3, 2, 5), randu(5, -1.5, 1.5, 2), randn(6, 2)), wrt: []int{0, 1, 2}},
)

func TestInstanceNormMatchesNaive(t *testing.T) {
	for i, shape := range [][]int{{2, 3, 4, 5}, {1, 1, 7}, {3, 5, 1, 1}, {2, 4, 3, 2, 3}, {2, 3, 0}} {
		x := randn(uint64(3*i+1), shape...)
		scale, bias := randu(uint64(3*i+2), -2, 2, shape[1]), randn(uint64(3*i+3), shape[1])
		got, err := InstanceNorm(x, scale, bias, 1e-5)
		require.NoError(t, err, "case %d", i)
		// Instance normalisation is group normalisation with a group per channel.
		requireClose(t, naiveGroupNorm(x, scale, bias, shape[1], 1e-5), got, 1e-12, 1e-12)
		checkDTypes(t, func() Op { return InstanceNormOp(InstanceNormAttrs{Epsilon: 1e-5}) }, x, scale, bias)
	}
}

func TestInstanceNormErrors(t *testing.T) {
	c3 := tensor.Zeros(tensor.Float32, 3)
	_, err := InstanceNorm(tensor.Zeros(tensor.Float32, 2, 3), c3, c3, 1e-5)
	require.ErrorContains(t, err, "instance_norm: inputs float32[2 3], float32[3], float32[3]: want x of rank >= 3, [N, C, spatial...]")
	_, err = InstanceNorm(tensor.Zeros(tensor.Float32, 2, 3, 4), tensor.Zeros(tensor.Float32, 4), c3, 1e-5)
	require.ErrorContains(t, err, "instance_norm: inputs float32[2 3 4], float32[4], float32[3]: want scale and bias of shape [3], one per channel")
	_, err = InstanceNorm(tensor.Zeros(tensor.Float32, 2, 3, 4), c3, c3, -1)
	require.ErrorContains(t, err, "instance_norm: inputs float32[2 3 4], float32[3], float32[3]: epsilon -1 must be positive and finite")
	op := InstanceNormOp(InstanceNormAttrs{Epsilon: 0.5})
	require.Equal(t, "instance_norm", op.Name())
	require.Equal(t, InstanceNormAttrs{Epsilon: 0.5}, op.(Attributed).Attrs())
}
