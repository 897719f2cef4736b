//go:build cuda

package cuda

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// kernelOps names the ops of package ops that this package has float32
// kernels for, besides the elementwise ops and reductions (unaryCodes,
// binaryCodes, reduceCodes). Each must have a device test: a run in
// parityRuns that TestParityGoldens drives over the op's goldens
// (TestEveryCUDAKernelIsTested checks both ways).
var kernelOps = []string{
	"softmax", "log_softmax", "softmax_cross_entropy", "softmax_cross_entropy_soft",
	"matmul", "conv2d", "conv2d_transpose", "max_pool2d", "avg_pool2d",
	"batch_norm", "layer_norm", "embedding", "attention",
	"lstm", "lstm_cell", "gru", "gru_cell",
	"sequence_pool", "sequence_softmax", "sequence_expand", "sequence_reverse", "sequence_slice", "sequence_concat",
}

// registerErrs holds the registrations ops refused (a name it does not
// know); TestEveryCUDAKernelIsTested fails on any.
var registerErrs []error

// init registers the kernels with ops' registry, so that ops.Kernels lists
// them in a program built with the tag cuda.
func init() {
	for _, codes := range []map[string]int{unaryCodes, binaryCodes, reduceCodes} {
		for name := range codes {
			if err := ops.RegisterKernel(name, "cuda", tensor.Float32); err != nil {
				registerErrs = append(registerErrs, err)
			}
		}
	}
	for _, name := range kernelOps {
		if err := ops.RegisterKernel(name, "cuda", tensor.Float32); err != nil {
			registerErrs = append(registerErrs, err)
		}
	}
}
