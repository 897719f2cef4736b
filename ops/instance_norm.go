package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "instance_norm", Inputs: []string{"x", "scale", "bias"}, Grads: []int{0, 1, 2},
		Make: MakeOp(InstanceNormOp), CUDA: DeviceFallback})
}

// InstanceNormAttrs are instance_norm's attributes: the epsilon added to
// the variance (ONNX InstanceNormalization's epsilon, default 1e-5).
type InstanceNormAttrs struct {
	Epsilon float64 `json:"epsilon"`
}

// InstanceNormOp returns instance normalisation (Ulyanov et al., 2016;
// ONNX InstanceNormalization, PyTorch InstanceNorm with affine weights and
// no running statistics): x is [N, C, D1, ...] (rank >= 3), and each
// sample's channel is normalised over its spatial positions with the
// biased variance:
//
//	y[n, c, s] = scale[c]·(x[n, c, s] - mean[n, c])/sqrt(var[n, c] + epsilon) + bias[c]
//
// with scale and bias [C]. It is group_norm with one channel per group,
// and runs its kernels. All three inputs have gradients.
func InstanceNormOp(a InstanceNormAttrs) Op {
	return &groupNormOp{name: "instance_norm", instance: true, eps: a.Epsilon}
}

// InstanceNorm returns the instance normalisation of x; see InstanceNormOp.
func InstanceNorm(x, scale, bias *tensor.Tensor, epsilon float64) (*tensor.Tensor, error) {
	return run(InstanceNormOp(InstanceNormAttrs{Epsilon: epsilon}), x, scale, bias)
}
