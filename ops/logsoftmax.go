package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "log_softmax", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(func(a SoftmaxAttrs) Op { return LogSoftmaxOp(a.Axis) }), CUDA: DeviceKernel})
}

// LogSoftmaxOp returns the op log(softmax(x)) along axis (negative counts
// from the end; -1 is tf.nn.log_softmax's default), computed stably as
// shifted - log(Σ exp(shifted)) with shifted = x - max over the axis, so
// it stays finite where softmax underflows to 0. The gradient is
// dx = dy - softmax(x)·Σ dy over the axis (TF's _LogSoftmaxGrad). It shares
// softmax's op type and kernels (softmax.go).
func LogSoftmaxOp(axis int) Op { return &softmaxOp{name: "log_softmax", axis: axis} }

// LogSoftmax returns log(softmax(x)) along axis; see LogSoftmaxOp.
func LogSoftmax(x *tensor.Tensor, axis int) (*tensor.Tensor, error) {
	return run(LogSoftmaxOp(axis), x)
}
