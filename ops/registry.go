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

// Kernel says that an op runs on a device in a dtype. A Fallback kernel is
// the op's CPU kernel run on host copies (see RegisterFallback), listed so
// that a model's slow path on a device is visible, never mistaken for a
// device kernel.
type Kernel struct {
	Device   string // "cpu" or a device kind such as "cuda"
	DType    tensor.DType
	Fallback bool
}

// KernelFactory builds an op's kernel on dev from the attributes of the CPU
// op it replaces (Attributed.Attrs). The kernel is an Op: Forward takes and
// returns tensors on dev, and Backward returns gradients there.
type KernelFactory func(dev tensor.Device, a Attrs) (Op, error)

// deviceKernel is a registered kernel and how to build it (nil for a
// fallback).
type deviceKernel struct {
	Kernel
	build KernelFactory
}

// deviceKernels holds the kernels that device packages register, by op.
var deviceKernels = map[string][]deviceKernel{}

// RegisterKernel records, at init time, the kernel of the named op on the
// device kind device in dtype dt, built by build. Device packages call it
// (ops/cuda with the build tag cuda); Dispatch then runs the op through
// it for inputs on such a device. An op that is not registered, a
// duplicate or a nil build is an error, and nothing is recorded.
func RegisterKernel(op, device string, dt tensor.DType, build KernelFactory) error {
	if build == nil {
		return fmt.Errorf("ops: RegisterKernel(%q, %q, %v): nil factory", op, device, dt)
	}
	return addKernel(op, deviceKernel{Kernel{Device: device, DType: dt}, build})
}

// RegisterFallback records that the named op runs on the device kind
// device in dtype dt through its CPU kernel: Dispatch copies the inputs to
// the host, runs the CPU op and copies the output (and in Backward the
// gradients) back. It is for the few ops a device has no kernel for yet;
// Kernels lists it with Fallback set.
func RegisterFallback(op, device string, dt tensor.DType) error {
	return addKernel(op, deviceKernel{Kernel: Kernel{Device: device, DType: dt, Fallback: true}})
}

func addKernel(op string, k deviceKernel) error {
	if _, ok := registry[op]; !ok {
		return fmt.Errorf("ops: kernel of %q on %q: no such op", op, k.Device)
	}
	if k.Device == "" || k.Device == "cpu" {
		return fmt.Errorf("ops: kernel of %q on %q: a device package registers kernels for its own device kind", op, k.Device)
	}
	if findKernel(op, k.Device, k.DType) != nil {
		return fmt.Errorf("ops: kernel of %q on %q in %v registered twice", op, k.Device, k.DType)
	}
	deviceKernels[op] = append(deviceKernels[op], k)
	return nil
}

// findKernel returns the registered kernel of op on device in dt, or nil.
func findKernel(op, device string, dt tensor.DType) *deviceKernel {
	for i, k := range deviceKernels[op] {
		if k.Device == device && k.DType == dt {
			return &deviceKernels[op][i]
		}
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
	for _, k := range deviceKernels[op] {
		ks = append(ks, k.Kernel)
	}
	return ks
}

// HasKernel reports whether the named op has a kernel of its own (not a
// fallback) on device in dt.
func HasKernel(op, device string, dt tensor.DType) bool {
	return slices.Contains(Kernels(op), Kernel{Device: device, DType: dt})
}
