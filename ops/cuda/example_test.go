package cuda_test

import (
	"errors"
	"fmt"

	"github.com/plumbml/plumb/ops/cuda"
)

// A failed driver call comes back as a *cuda.Error that names the call and,
// for a kernel launch, the kernel and its launch shape; errors.As finds it
// inside a wrapped error. (This package's GPU code needs the build tag
// cuda; the error type is in every build.)
func ExampleError() {
	driverErr := errors.New("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")
	var err error = &cuda.Error{Call: "cuLaunchKernel", Kernel: "conv2d_forward",
		Grid: [3]int{64, 1, 1}, Block: [3]int{256, 1, 1}, Err: driverErr}
	err = fmt.Errorf("step 12: %w", err)

	fmt.Println(err)
	var cerr *cuda.Error
	if errors.As(err, &cerr) {
		fmt.Println("kernel:", cerr.Kernel, "driver error:", errors.Is(err, driverErr))
	}
	// Output:
	// step 12: cuda: cuLaunchKernel conv2d_forward grid [64 1 1] block [256 1 1] shared 0: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
	// kernel: conv2d_forward driver error: true
}
