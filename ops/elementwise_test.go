package ops

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// Element-wise kernels large enough to run in chunks over the cores give
// the bits they give on one core, forward and backward, on an odd size.
func TestElementwiseOverCoresMatchOneCore(t *testing.T) {
	const n = 300_001
	x, y, gout := randn(1, n), randn(2, n), randn(3, n)
	for _, c := range []struct {
		op func() Op
		in []*tensor.Tensor
	}{
		{func() Op { return UnaryOp("relu") }, ins(x)},
		{func() Op { return UnaryOp("sigmoid") }, ins(x)},
		{func() Op { return UnaryOp("tanh") }, ins(x)},
		{func() Op { return UnaryOp("exp") }, ins(x)},
		{func() Op { return BinaryOp("add") }, ins(x, y)},
		{func() Op { return BinaryOp("div") }, ins(x, y)},
	} {
		for _, conv := range []func(*tensor.Tensor) *tensor.Tensor{func(x *tensor.Tensor) *tensor.Tensor { return x }, f32} {
			in := make([]*tensor.Tensor, len(c.in))
			for i, v := range c.in {
				in[i] = conv(v)
			}
			run := func(procs int) []*tensor.Tensor {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				op := c.op()
				out, err := op.Forward(in)
				require.NoError(t, err)
				need := make([]bool, len(in))
				for i := range need {
					need[i] = true
				}
				g, err := op.Backward(in, out, conv(gout), need)
				require.NoError(t, err)
				return append([]*tensor.Tensor{out}, g...)
			}
			one, many := run(1), run(4)
			for i := range one {
				require.Equal(t, one[i].Raw(), many[i].Raw(), "%s %v output %d", c.op().Name(), in[0].DType(), i)
			}
		}
	}
}
