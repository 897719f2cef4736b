package ops

import (
	"slices"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "broadcast_to", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(BroadcastToOp), CUDA: DeviceFallback})
}

// BroadcastToAttrs are broadcast_to's attributes: the output's shape.
type BroadcastToAttrs struct {
	Shape []int `json:"shape"`
}

type broadcastToOp struct{ a BroadcastToAttrs }

// BroadcastToOp returns the op that repeats x along its size-1 and missing
// leading axes to the shape a.Shape, as tf.broadcast_to and NumPy's
// broadcast_to do (ONNX's Expand with a shape of the output's rank): x's
// axes align with the shape's trailing axes, and each of x's sizes equals
// the target's or is 1. The gradient sums the upstream gradient over the
// repeated axes.
func BroadcastToOp(a BroadcastToAttrs) Op {
	return &broadcastToOp{a: BroadcastToAttrs{Shape: slices.Clone(a.Shape)}}
}

// BroadcastTo returns x broadcast to shape; see BroadcastToOp.
func BroadcastTo(x *tensor.Tensor, shape ...int) (*tensor.Tensor, error) {
	return run(BroadcastToOp(BroadcastToAttrs{Shape: shape}), x)
}

func (o *broadcastToOp) Name() string { return "broadcast_to" }

func (o *broadcastToOp) Attrs() any { return o.a }

// Check validates the input against the target shape from shapes alone.
func (o *broadcastToOp) Check(in []*tensor.Tensor) error {
	if _, err := checkFloat("broadcast_to", in, 1); err != nil {
		return err
	}
	to := o.a.Shape
	x := in[0].Shape()
	if len(x) > len(to) {
		return Errorf("broadcast_to", in, "cannot broadcast %d axes to shape %v of %d", len(x), to, len(to))
	}
	for _, d := range to {
		if d < 0 {
			return Errorf("broadcast_to", in, "shape %v has a negative size", to)
		}
	}
	for i, d := range x {
		if t := to[len(to)-len(x)+i]; d != t && d != 1 {
			return Errorf("broadcast_to", in, "axis %d of size %d broadcasts to %d only when it is 1 (shape %v)", i, d, t, to)
		}
	}
	return nil
}

func (o *broadcastToOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := o.Check(in); err != nil {
		return nil, err
	}
	x := in[0]
	shape := tensor.Shape(o.a.Shape)
	out := tensor.Zeros(x.DType(), shape...)
	st := [][]int{bcastStrides(x.Shape(), shape)}
	switch x.DType() {
	case tensor.Float32:
		broadcastKernel(x.Float32s(), out.Float32s(), shape, st)
	case tensor.Float64:
		broadcastKernel(x.Float64s(), out.Float64s(), shape, st)
	}
	return out, nil
}

// broadcastKernel copies x's elements to every output position that reads
// them, one innermost run at a time.
func broadcastKernel[T tensor.Float](x, out []T, shape tensor.Shape, st [][]int) {
	bcastRuns(shape, st, func(o int, offs, step []int, n int) {
		p, s := offs[0], step[0]
		if s == 0 {
			v := x[p]
			for i := range n {
				out[o+i] = v
			}
			return
		}
		copy(out[o:o+n], x[p:p+n])
	})
}

func (o *broadcastToOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	if !need[0] {
		return []*tensor.Tensor{nil}, nil
	}
	return []*tensor.Tensor{addGrad(gout, in[0].Shape(), false)}, nil
}
