package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "gather", Inputs: []string{"params", "indices"}, Grads: []int{0},
		Make: MakeOp(func(a GatherAttrs) Op { return GatherOp(a.Axis) }), CUDA: DeviceFallback})
}

// GatherAttrs are gather's attributes: the axis it indexes.
type GatherAttrs struct {
	Axis int `json:"axis"`
}

type gatherOp struct {
	axis int
	idx  []int // Forward's validated indices, for Backward
}

// GatherOp returns the op that takes the slices of params at indices along
// axis, as tf.gather(params, indices, axis) without batch_dims: params is a
// float tensor, indices an int32 or int64 tensor of any shape, and the
// output has shape params[:axis] + indices.shape + params[axis+1:]. An index
// may be negative, counting from the end as in ONNX Gather (-1 is the last
// slice); one outside [-params.shape[axis], params.shape[axis]) is an error
// (as TF on CPU for indices past the end), never a clamp. The gradient adds each upstream slice back into the params row it
// came from, so repeated indices accumulate; indices have no gradient.
func GatherOp(axis int) Op { return &gatherOp{axis: axis} }

// Gather returns params' slices at indices along axis; see GatherOp.
func Gather(params, indices *tensor.Tensor, axis int) (*tensor.Tensor, error) {
	return run(GatherOp(axis), params, indices)
}

func (o *gatherOp) Name() string { return "gather" }

// dims views params as [outer, n, inner] around the resolved axis.
func (o *gatherOp) dims(params *tensor.Tensor) (outer, n, inner int) {
	ax, _ := tensor.Axis(o.axis, params.Rank())
	s := params.Shape()
	return s[:ax].Size(), s[ax], s[ax+1:].Size()
}

func (o *gatherOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkArity("gather", in, 2); err != nil {
		return nil, err
	}
	params, indices := in[0], in[1]
	if !params.DType().IsFloat() {
		return nil, Errorf("gather", in, "want float32 or float64 params")
	}
	idx, err := indices.Ints()
	if err != nil {
		return nil, Errorf("gather", in, "want int32 or int64 indices")
	}
	ax, err := tensor.Axis(o.axis, params.Rank())
	if err != nil {
		return nil, Errorf("gather", in, "%v", err)
	}
	s := params.Shape()
	for j, i := range idx {
		if i < -s[ax] || i >= s[ax] {
			return nil, Errorf("gather", in, "index %d out of range [%d, %d) on axis %d", i, -s[ax], s[ax], ax)
		}
		if i < 0 {
			idx[j] = i + s[ax]
		}
	}
	o.idx = idx
	outShape := append(append(s[:ax].Clone(), indices.Shape()...), s[ax+1:]...)
	out := tensor.Zeros(params.DType(), outShape...)
	outer, n, inner := o.dims(params)
	switch params.DType() {
	case tensor.Float32:
		gatherKernel(params.Float32s(), out.Float32s(), idx, outer, n, inner)
	case tensor.Float64:
		gatherKernel(params.Float64s(), out.Float64s(), idx, outer, n, inner)
	}
	return out, nil
}

// gatherKernel copies row idx[j] of each [n, inner] block of p to row j of
// the matching [len(idx), inner] block of out.
func gatherKernel[T tensor.Float](p, out []T, idx []int, outer, n, inner int) {
	k := len(idx)
	for o := 0; o < outer; o++ {
		for j, i := range idx {
			copy(out[(o*k+j)*inner:(o*k+j+1)*inner], p[(o*n+i)*inner:(o*n+i+1)*inner])
		}
	}
}

func (o *gatherOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	grads := make([]*tensor.Tensor, 2)
	if !need[0] {
		return grads, nil
	}
	g := tensor.ZerosLike(in[0])
	outer, n, inner := o.dims(in[0])
	switch g.DType() {
	case tensor.Float32:
		gatherGrad(gout.Float32s(), g.Float32s(), o.idx, outer, n, inner)
	case tensor.Float64:
		gatherGrad(gout.Float64s(), g.Float64s(), o.idx, outer, n, inner)
	}
	grads[0] = g
	return grads, nil
}

// gatherGrad scatter-adds gatherKernel's rows back: g[o, idx[j]] += gout[o, j].
func gatherGrad[T tensor.Float](gout, g []T, idx []int, outer, n, inner int) {
	k := len(idx)
	for o := 0; o < outer; o++ {
		for j, i := range idx {
			dst := g[(o*n+i)*inner : (o*n+i+1)*inner]
			for t, v := range gout[(o*k+j)*inner : (o*k+j+1)*inner] {
				dst[t] += v
			}
		}
	}
}
