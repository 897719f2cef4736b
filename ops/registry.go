package ops

import (
	"fmt"
	"slices"
	"sort"

	"github.com/plumbml/plumb/tensor"
)

// Spec is an op's entry in the registry, the one list of all ops that the
// gradient-check suite, the parity harness and device backends read, so each
// can fail on an op that lacks its case or kernel.
type Spec struct {
	Name   string
	Inputs []string // input names, in order
	Grads  []int    // indices of the inputs that are differentiable
}

var registry = map[string]Spec{}

// register adds an op at init time; a duplicate name is a programming error.
func register(s Spec) {
	if _, dup := registry[s.Name]; dup {
		panic("ops: duplicate registration of " + s.Name)
	}
	registry[s.Name] = s
}

// Registered returns every op's Spec, sorted by name.
func Registered() []Spec {
	out := make([]Spec, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the Spec of the named op.
func Lookup(name string) (Spec, bool) {
	s, ok := registry[name]
	return s, ok
}

// Kernel says that an op runs on a device in a dtype.
type Kernel struct {
	Device string // "cpu" or "cuda"
	DType  tensor.DType
}

// deviceKernels holds the kernels that device packages register, by op.
var deviceKernels = map[string][]Kernel{}

// RegisterKernel records, at init time, that the named op has a kernel on
// device for each of dtypes. Device packages call it (ops/cuda with the
// build tag cuda), so that their tests can fail for a kernel without a
// device test. An op that is not registered is an error, and nothing is
// recorded.
func RegisterKernel(op, device string, dtypes ...tensor.DType) error {
	if _, ok := registry[op]; !ok {
		return fmt.Errorf("ops: RegisterKernel(%q, %q): no such op", op, device)
	}
	for _, dt := range dtypes {
		deviceKernels[op] = append(deviceKernels[op], Kernel{Device: device, DType: dt})
	}
	return nil
}

// Kernels returns the kernels of the named op: every op runs on the CPU in
// float32 and float64 (the kernels in this package), then whatever device
// packages linked into the program registered.
func Kernels(op string) []Kernel {
	if _, ok := registry[op]; !ok {
		return nil
	}
	ks := []Kernel{{Device: "cpu", DType: tensor.Float32}, {Device: "cpu", DType: tensor.Float64}}
	return append(ks, deviceKernels[op]...)
}

// HasKernel reports whether the named op has a kernel on device in dt.
func HasKernel(op, device string, dt tensor.DType) bool {
	return slices.Contains(Kernels(op), Kernel{Device: device, DType: dt})
}
