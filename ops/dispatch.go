package ops

import (
	"errors"
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// Dispatch returns the op that runs op on the inputs in: op itself when
// every input is in host memory, which costs one nil check per input;
// otherwise the kernel registered for (op's name, the inputs' device kind,
// their dtype), built from op's attributes. This is the one place where an
// op meets a device: graph.Tape.Apply and the plain functions of this
// package call it before Forward (see ARCHITECTURE.md, "Devices").
//
// Inputs on two devices (host memory counts as one) are an error naming
// the op and both devices; nothing is ever copied silently. So is an op
// with no kernel on the device, unless the device registered a fallback
// for it (RegisterFallback). Nil inputs are skipped.
func Dispatch(op Op, in []*tensor.Tensor) (Op, error) {
	if op == nil {
		return nil, errors.New("ops.Dispatch: nil op")
	}
	for _, t := range in {
		if t != nil && t.Storage() != nil {
			return dispatch(op, in)
		}
	}
	return op, nil
}

// dispatch is Dispatch for inputs of which one at least is on a device.
func dispatch(op Op, in []*tensor.Tensor) (Op, error) {
	var dev tensor.Device
	first, dt := -1, tensor.DType(0)
	for i, t := range in {
		if t == nil {
			continue
		}
		if first < 0 {
			first, dev = i, t.Device()
		} else if d := t.Device(); d != dev {
			return nil, fmt.Errorf("%s: input %d is on %s but input %d is on %s; move them to one device with To",
				op.Name(), first, tensor.DeviceName(dev), i, tensor.DeviceName(d))
		}
		if dt == 0 || (!dt.IsFloat() && t.DType().IsFloat()) {
			dt = t.DType() // the first float input's dtype names the kernel
		}
	}
	if _, ok := op.(deviceOp); ok {
		return op, nil // a kernel already (a test builds one directly)
	}
	k := findKernel(op.Name(), dev.Kind(), dt)
	switch {
	case k == nil:
		return nil, fmt.Errorf("op %s has no %s %v kernel (inputs on %v)", op.Name(), dev.Kind(), dt, dev)
	case k.Fallback:
		return &fallbackOp{cpu: op, dev: dev}, nil // the CPU op validates the host copies
	}
	if c, ok := op.(Checker); ok {
		if err := c.Check(in); err != nil {
			return nil, err
		}
	}
	a, ok := op.(Attributed)
	if !ok {
		return nil, fmt.Errorf("op %s has a %s kernel but does not give its attributes (ops.Attributed)", op.Name(), dev.Kind())
	}
	kop, err := k.build(dev, a.Attrs())
	if errors.Is(err, ErrFallback) {
		return &fallbackOp{cpu: op, dev: dev}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s on %v: %w", op.Name(), dev, err)
	}
	return kop, nil
}

// ErrFallback is what a device's KernelFactory returns, wrapped or not,
// for attributes its kernel does not implement (a pool's dilation, say):
// Dispatch then runs the CPU op on host copies of the inputs, as for an op
// registered with RegisterFallback, instead of failing.
var ErrFallback = errors.New("the device kernel does not implement these attributes; run the CPU op on host copies")

// Checker is an op with a device-free check: the count, dtypes, ranks and
// shapes of its inputs and its attributes, read from the tensors' shapes
// and dtypes alone (never their data, which may be on a device). Dispatch
// runs it before building a device kernel, so device kernels do not
// validate again; the op's own Forward runs the same check on the CPU.
// It is optional: an op without it (a user's custom op) is handed to the
// device unchecked.
type Checker interface {
	Check(in []*tensor.Tensor) error
}

// deviceOp marks a device kernel, which Dispatch passes through.
type deviceOp interface {
	Op
	Device() tensor.Device
}

// Freer is an op that holds memory between its Forward and Backward
// (saved activations, statistics, indices): a device kernel's device
// memory, or a CPU op's scratch buffers (the LSTM's and GRU's gate
// activations).
// graph.Tape calls Free once the op's backward has run (or when the step
// is released, for a retained graph), or right after Forward when it
// records nothing; the plain functions of this package free it after
// Forward. Backward after Free is an error.
type Freer interface {
	Free()
}

// Run dispatches op on in (see Dispatch) and runs its Forward, freeing a
// device kernel's saved state since nothing will call its Backward. The
// plain functions (Conv2D, MatMul, ...) are Run of their op.
func Run(op Op, in ...*tensor.Tensor) (*tensor.Tensor, error) {
	k, err := Dispatch(op, in)
	if err != nil {
		return nil, err
	}
	out, err := k.Forward(in)
	if f, ok := k.(Freer); ok {
		f.Free()
	}
	return out, err
}
