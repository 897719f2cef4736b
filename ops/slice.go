package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "slice", Inputs: []string{"x"}, Grads: []int{0},
		Make: MakeOp(func(a SliceAttrs) Op { return SliceOp(a.Axis, a.Begin, a.End) }), CUDA: DeviceFallback})
}

// SliceAttrs are slice's attributes: the axis and the range [Begin, End).
type SliceAttrs struct {
	Axis  int `json:"axis"`
	Begin int `json:"begin"`
	End   int `json:"end"`
}

type sliceOp struct{ axis, from, to int }

// SliceOp returns the op that keeps indices [from, to) of x along axis, all
// of every other axis (tf.slice with begin from and size to-from on that
// axis; 0 <= from <= to <= x.shape[axis]). The output is a copy
// (tensor.Slice); the gradient is the upstream gradient padded with zeros
// back to x's shape.
func SliceOp(axis, from, to int) Op { return &sliceOp{axis: axis, from: from, to: to} }

// Slice returns x restricted to [from, to) along axis; see SliceOp.
func Slice(x *tensor.Tensor, axis, from, to int) (*tensor.Tensor, error) {
	return run(SliceOp(axis, from, to), x)
}

func (o *sliceOp) Name() string { return "slice" }

// dims checks the input and returns the sliced axis and the output shape.
func (o *sliceOp) dims(in []*tensor.Tensor) (int, tensor.Shape, error) {
	ax, err := o.axisOf(in)
	if err != nil {
		return 0, nil, err
	}
	shape := in[0].Shape().Clone()
	shape[ax] = o.to - o.from
	return ax, shape, nil
}

// axisOf checks the input and returns the sliced axis.
func (o *sliceOp) axisOf(in []*tensor.Tensor) (int, error) {
	if err := checkArity("slice", in, 1); err != nil {
		return 0, err
	}
	x := in[0]
	ax, err := tensor.Axis(o.axis, x.Rank())
	if err != nil {
		return 0, Errorf("slice", in, "tensor: slice of shape %v: %v", x.Shape(), err)
	}
	if o.from < 0 || o.to < o.from || o.to > x.Dim(ax) {
		return 0, Errorf("slice", in, "tensor: slice [%d,%d) of axis %d of shape %v", o.from, o.to, ax, x.Shape())
	}
	return ax, nil
}

func (o *sliceOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	ax, shape, err := o.dims(in)
	if err != nil {
		return nil, err
	}
	out := tensor.Empty(in[0].DType(), shape...)
	o.into(out, in[0], ax)
	return out, nil
}

// ForwardInto is slice's Into.
func (o *sliceOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	ax, err := o.axisOf(in)
	if err != nil {
		return err
	}
	x := in[0]
	ok := out != nil && out.DType() == x.DType() && out.Rank() == x.Rank() && out.Storage() == nil
	for d := 0; ok && d < x.Rank(); d++ {
		want := x.Dim(d)
		if d == ax {
			want = o.to - o.from
		}
		ok = out.Dim(d) == want
	}
	if !ok { // checkOut says what was wanted; the shape is built only here
		_, shape, _ := o.dims(in)
		return checkOut("slice", in, out, x.DType(), shape...)
	}
	o.into(out, in[0], ax)
	return nil
}

// into copies x's [from, to) range of axis ax into out, one contiguous
// block of (to-from)·inner elements per index of the leading axes.
func (o *sliceOp) into(out, x *tensor.Tensor, ax int) {
	outer, inner := x.Shape()[:ax].Size(), x.Shape()[ax+1:].Size()
	switch dst := out.Raw().(type) {
	case []float32:
		sliceInto(dst, tensor.Data[float32](x), outer, inner, x.Dim(ax), o.from, o.to)
	case []float64:
		sliceInto(dst, tensor.Data[float64](x), outer, inner, x.Dim(ax), o.from, o.to)
	case []int32:
		sliceInto(dst, tensor.Data[int32](x), outer, inner, x.Dim(ax), o.from, o.to)
	case []int64:
		sliceInto(dst, tensor.Data[int64](x), outer, inner, x.Dim(ax), o.from, o.to)
	}
}

func sliceInto[T tensor.Elem](dst, src []T, outer, inner, n, from, to int) {
	k := (to - from) * inner
	for b := 0; b < outer; b++ {
		copy(dst[b*k:(b+1)*k], src[(b*n+from)*inner:])
	}
}

// Backward concatenates zeros before and after the upstream gradient.
func (o *sliceOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	x := in[0]
	ax, err := tensor.Axis(o.axis, x.Rank())
	if err != nil {
		return nil, err
	}
	before, after := x.Shape().Clone(), x.Shape().Clone()
	before[ax], after[ax] = o.from, x.Dim(ax)-o.to
	g, err := tensor.Concat(ax, tensor.Zeros(gout.DType(), before...), gout, tensor.Zeros(gout.DType(), after...))
	return []*tensor.Tensor{g}, err
}
