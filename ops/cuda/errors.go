package cuda

import (
	"fmt"
	"strings"
)

// Error is a failed CUDA driver call. For a kernel launch it names the
// kernel and the launch shape, so a failure in a long training step says
// which kernel, on which grid, went wrong.
type Error struct {
	Call   string // the driver call or step, such as "cuMemAlloc" or "cuLaunchKernel"
	Kernel string // the kernel, for launches and the synchronisation after one
	Grid   [3]int // launch grid, for launches
	Block  [3]int // launch block, for launches
	Shared int    // dynamic shared memory in bytes, for launches
	Detail string // what else identifies the call, such as a byte count
	Err    error  // the driver's error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("cuda: ")
	b.WriteString(e.Call)
	if e.Kernel != "" {
		fmt.Fprintf(&b, " %s grid %v block %v shared %d", e.Kernel, e.Grid, e.Block, e.Shared)
	}
	if e.Detail != "" {
		b.WriteString(" (" + e.Detail + ")")
	}
	b.WriteString(": ")
	if e.Err == nil {
		b.WriteString("unknown error")
	} else {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the driver's error.
func (e *Error) Unwrap() error { return e.Err }
