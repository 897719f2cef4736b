//go:build cuda

package cuda

import (
	"errors"
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// kernel is one op's CUDA implementation on device buffers: the launchers
// of this package behind one shape, so that every op runs through the
// generic Op below. in holds the inputs as buffers (nil where an input is
// absent); host gives a kernel that reads an integer input on the host
// (labels, ids) that input copied there. backward returns one gradient per
// input (nil where not needed); free releases the state forward saved.
type kernel struct {
	forward  func(in []*Buffer, host func(i int) (*tensor.Tensor, error)) (*Buffer, error)
	backward func(in []*Buffer, out, gout *Buffer, need []bool) ([]*Buffer, error)
	free     func()
}

// op is a kernel as an ops.Op on tensors on the device d: what ops.Dispatch
// runs in place of the CPU op when the inputs are on d.
type op struct {
	name string
	d    *Device
	k    kernel
	out  tensor.Shape // Forward's output shape; nil before Forward
}

func (o *op) Name() string          { return o.name }
func (o *op) Device() tensor.Device { return o.d }

// Free releases the device memory the kernel saved for Backward; the tape
// calls it when the step is released.
func (o *op) Free() {
	if o.k.free != nil {
		o.k.free()
	}
	o.out = nil // Backward after Free is an error, as before Forward
}

func (o *op) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	bufs, err := o.views(in)
	if err != nil {
		return nil, err
	}
	host := func(i int) (*tensor.Tensor, error) {
		if i >= len(in) || in[i] == nil {
			return nil, nil
		}
		return in[i].To(nil)
	}
	y, err := o.k.forward(bufs, host)
	if err != nil {
		return nil, err
	}
	o.out = y.shape.Clone()
	return wrap(y), nil
}

func (o *op) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	if o.k.backward == nil {
		return nil, fmt.Errorf("%s on %v: no gradient kernel", o.name, o.d)
	}
	// The one check of every kernel's Backward: it follows a Forward, and
	// gout has the output's shape (the launchers check neither again).
	if o.out == nil {
		return nil, ops.Errorf(o.name, in, "Backward before Forward")
	}
	if gout == nil || !gout.Shape().Equal(o.out) {
		return nil, ops.Errorf(o.name, []*tensor.Tensor{gout}, "want gout of the output's shape %v", o.out)
	}
	bufs, err := o.views(append(append(make([]*tensor.Tensor, 0, len(in)+2), in...), out, gout))
	if err != nil {
		return nil, err
	}
	n := len(in)
	gb, err := o.k.backward(bufs[:n], bufs[n], bufs[n+1], need)
	if err != nil {
		return nil, err
	}
	grads := make([]*tensor.Tensor, len(in))
	for i, g := range gb {
		if i < len(grads) && (i >= len(need) || need[i]) {
			grads[i] = wrap(g)
		} else {
			g.Free()
		}
	}
	return grads, nil
}

// views returns the inputs' buffers; every non-nil input must be on d.
func (o *op) views(in []*tensor.Tensor) ([]*Buffer, error) {
	bufs := make([]*Buffer, len(in))
	for i, t := range in {
		if t == nil {
			continue
		}
		if t.Device() != tensor.Device(o.d) {
			return nil, fmt.Errorf("%s on %v: input %d is on %s", o.name, o.d, i, tensor.DeviceName(t.Device()))
		}
		bufs[i] = view(t)
	}
	return bufs, nil
}

// at reports need[i], false past need's end.
func at(need []bool, i int) bool { return i < len(need) && need[i] }

// errUnsupported marks a form of an op that the CUDA kernel does not
// implement (and the CPU op does): the golden runs skip such cases.
var errUnsupported = errors.New("not implemented by the CUDA kernel")

// reshapeOp is reshape on the device: a view of the same storage with the
// new shape (tensor.Reshape keeps the device), as the CPU op's.
type reshapeOp struct {
	d     *Device
	shape []int
}

func (o *reshapeOp) Name() string          { return "reshape" }
func (o *reshapeOp) Device() tensor.Device { return o.d }

func (o *reshapeOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	return in[0].Reshape(o.shape...) // input count and size checked by ops.Dispatch (reshapeOp.Check)
}

func (o *reshapeOp) Backward(in []*tensor.Tensor, _, gout *tensor.Tensor, _ []bool) ([]*tensor.Tensor, error) {
	g, err := gout.Reshape(in[0].Shape()...)
	return []*tensor.Tensor{g}, err
}
