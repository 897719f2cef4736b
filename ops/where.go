package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "where", Inputs: []string{"cond", "a", "b"}, Grads: []int{1, 2},
		Make: MakeOp(func(NoAttrs) Op { return WhereOp() }), CUDA: DeviceFallback})
}

type whereOp struct {
	mask []bool // cond != 0 over cond's own elements, saved for Backward
}

// WhereOp returns the op that picks a where cond is true and b elsewhere,
// elementwise with NumPy broadcasting of all three inputs
// (tf.where(cond, a, b), TF 2 semantics). cond may have any dtype; a nonzero
// element (NaN included) is true. a and b are float of one dtype. The
// gradient routes the upstream gradient to a where cond is true and to b
// elsewhere, summed over broadcast axes; cond has no gradient.
func WhereOp() Op { return &whereOp{} }

// Where returns cond ? a : b elementwise; see WhereOp.
func Where(cond, a, b *tensor.Tensor) (*tensor.Tensor, error) { return run(WhereOp(), cond, a, b) }

func (o *whereOp) Name() string { return "where" }

func (o *whereOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkArity("where", in, 3); err != nil {
		return nil, err
	}
	cond, a, b := in[0], in[1], in[2]
	if a.DType() != b.DType() || !a.DType().IsFloat() {
		return nil, Errorf("where", in, "want float32 or float64 a and b of one dtype")
	}
	shape, err := BroadcastShapes(cond.Shape(), a.Shape(), b.Shape())
	if err != nil {
		return nil, Errorf("where", in, "%v", err)
	}
	o.mask = make([]bool, cond.Size())
	for i := range o.mask {
		o.mask[i] = cond.At(i) != 0
	}
	return o.pick(cond.Shape(), a, b, shape), nil
}

// pick returns the tensor of the broadcast shape holding a where the mask
// is true and b elsewhere.
func (o *whereOp) pick(condShape tensor.Shape, a, b *tensor.Tensor, shape tensor.Shape) *tensor.Tensor {
	out := tensor.Zeros(a.DType(), shape...)
	st := [][]int{bcastStrides(condShape, shape), bcastStrides(a.Shape(), shape), bcastStrides(b.Shape(), shape)}
	switch a.DType() {
	case tensor.Float32:
		whereKernel(o.mask, a.Float32s(), b.Float32s(), out.Float32s(), shape, st)
	case tensor.Float64:
		whereKernel(o.mask, a.Float64s(), b.Float64s(), out.Float64s(), shape, st)
	}
	return out
}

func whereKernel[T tensor.Float](mask []bool, a, b, out []T, shape tensor.Shape, st [][]int) {
	bcastRuns(shape, st, func(o int, offs, step []int, n int) {
		for i := 0; i < n; i++ {
			if mask[offs[0]+i*step[0]] {
				out[o+i] = a[offs[1]+i*step[1]]
			} else {
				out[o+i] = b[offs[2]+i*step[2]]
			}
		}
	})
}

// Backward is where(cond, gout, 0) for a and where(cond, 0, gout) for b,
// each summed back to its input's shape.
func (o *whereOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	grads := make([]*tensor.Tensor, 3)
	zero := tensor.Zeros(gout.DType())
	if need[1] {
		grads[1] = sumTo(o.pick(in[0].Shape(), gout, zero, out.Shape()), in[1].Shape())
	}
	if need[2] {
		grads[2] = sumTo(o.pick(in[0].Shape(), zero, gout, out.Shape()), in[2].Shape())
	}
	return grads, nil
}
