package ops

import (
	"fmt"
	"slices"
	"sort"

	"github.com/plumbml/plumb/tensor"
)

// Spec is an op's entry in the op table: the one declaration of an op's
// facts, registered from the op's own file. The gradient-check suite, the
// parity harness, Build and device backends read it, and `go generate`
// (ops/internal/opgen) writes from it the attribute bag Attrs, the CUDA
// backend's kernel and fallback lists and the op tables in docs/ops.md and
// ops/cuda/README.md.
type Spec struct {
	Name   string
	Inputs []string // input names, in order
	Grads  []int    // indices of the inputs that are differentiable
	// Make builds the op from its typed attributes (<Op>Attrs, or NoAttrs),
	// whose fields' JSON names are the parity goldens' (see MakeOp).
	Make Maker
	// CUDA says how the op runs on a CUDA device: its own kernel, a
	// relabelling of the storage (DeviceLayout), or its CPU kernel on host
	// copies (DeviceFallback). ops/cuda registers what it says.
	CUDA Backend
}

// Backend says how a device runs an op.
type Backend string

// The ways a device runs an op.
const (
	NoDevice       Backend = ""         // not at all
	DeviceKernel   Backend = "kernel"   // a kernel of its own
	DeviceLayout   Backend = "layout"   // a relabelling of the storage's shape
	DeviceFallback Backend = "fallback" // the CPU kernel on host copies of the inputs
)

// NoAttrs is the typed attributes of an op that has none.
type NoAttrs struct{}

// Maker builds an op from its typed attributes; MakeOp makes one.
type Maker interface {
	// Attrs returns the zero value of the op's typed attributes.
	Attrs() any
	// Make builds the op from typed attributes of Attrs' type.
	Make(attrs any) (Op, error)
}

// MakeOp returns the Maker that builds an op with f from attributes of type
// A, the op's <Op>Attrs struct. A's exported fields are the op's
// attributes; their `json` tags name them in the parity goldens' case.json.
func MakeOp[A any](f func(A) Op) Maker { return maker[A](f) }

type maker[A any] func(A) Op

func (m maker[A]) Attrs() any {
	var a A
	return a
}

func (m maker[A]) Make(attrs any) (Op, error) {
	a, ok := attrs.(A)
	if !ok {
		return nil, fmt.Errorf("attributes %T, want %T", attrs, *new(A))
	}
	return m(a), nil
}

var registry = map[string]Spec{}

// register adds an op at init time; a duplicate name is a programming error.
func register(s Spec) {
	if _, dup := registry[s.Name]; dup {
		panic("ops: duplicate registration of " + s.Name)
	}
	if s.Make == nil {
		panic("ops: " + s.Name + " registered without Make")
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

// KernelFactory builds an op's kernel on dev from the typed attributes
// (<Op>Attrs) of the CPU op it replaces (Attributed.Attrs). The kernel is
// an Op: Forward takes and returns tensors on dev, and Backward returns
// gradients there. Dispatch has run the op's device-free check (Checker)
// before, so a kernel need not validate its inputs again.
type KernelFactory func(dev tensor.Device, attrs any) (Op, error)

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
