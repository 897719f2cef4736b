package ops

import (
	"slices"

	"github.com/plumbml/plumb/tensor"
)

// Into is the optional interface of an op that can compute its forward
// pass into an output tensor its caller owns, as a compiled inference
// plan (package infer) runs ops into the slots of its arena (ONNX
// Runtime's and TFLite's kernels write into preallocated outputs the same
// way). ForwardInto validates the inputs as Forward does, checks that out
// has the dtype and shape Forward would return, and writes every element
// of out. Unlike Forward it saves nothing on the op, so one op value may
// serve any number of ForwardInto calls, on many goroutines at once; there
// is no Backward after it. out must not overlap any input, and the inputs
// must be in host memory.
type Into interface {
	ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error
}

// checkOut checks that out is a host tensor of dtype dt and shape dims
// (the shape Forward would return for in), naming op and the inputs.
func checkOut(op string, in []*tensor.Tensor, out *tensor.Tensor, dt tensor.DType, dims ...int) error {
	if out == nil {
		return Errorf(op, in, "ForwardInto a nil output")
	}
	same := out.DType() == dt && out.Rank() == len(dims) && out.Storage() == nil
	for i := 0; same && i < len(dims); i++ {
		same = out.Dim(i) == dims[i]
	}
	if !same {
		want := tensor.Shape(slices.Clone(dims)) // a copy, so that dims stays on the caller's stack
		return Errorf(op, in, "ForwardInto an output %v%v; want a host tensor %v%v", out.DType(), out.Shape(), dt, want)
	}
	return nil
}

// ForwardInto is unary's Into.
func (o *unaryOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	dt, err := checkFloat(o.name, in, 1)
	if err != nil {
		return err
	}
	if err := checkOut(o.name, in, out, dt, in[0].Shape()...); err != nil {
		return err
	}
	o.into(out, in)
	return nil
}

// ForwardInto is the binary ops' Into.
func (o *binaryOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	dt, err := checkFloat(o.name, in, 2)
	if err != nil {
		return err
	}
	shape := in[0].Shape()
	if !slicesEqual(in[0].Shape(), in[1].Shape()) { // broadcasting computes the shape
		if out != nil && broadcastsTo(out.Shape(), in[0].Shape(), in[1].Shape()) {
			shape = out.Shape() // the broadcast shape, with nothing to build
		} else if shape, err = BroadcastShapes(in[0].Shape(), in[1].Shape()); err != nil {
			return Errorf(o.name, in, "%v", err)
		}
	}
	if err := checkOut(o.name, in, out, dt, shape...); err != nil {
		return err
	}
	o.into(out, in, shape)
	return nil
}

func slicesEqual(a, b tensor.Shape) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ForwardInto is softmax's and log-softmax's Into.
func (o *softmaxOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	dt, err := checkFloat(o.name, in, 1)
	if err != nil {
		return err
	}
	outer, n, inner, err := o.dims(in)
	if err != nil {
		return err
	}
	if err := checkOut(o.name, in, out, dt, in[0].Shape()...); err != nil {
		return err
	}
	softmaxInto(dt, in[0], out, outer, n, inner, o.name == "log_softmax")
	return nil
}

// ForwardInto is matmul's Into.
func (o *matmulOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	dt, err := checkFloat("matmul", in, 2)
	if err != nil {
		return err
	}
	g, err := o.memoGeom(in)
	if err != nil {
		return err
	}
	if err := checkOut("matmul", in, out, dt, g.out...); err != nil {
		return err
	}
	o.into(out, in, g)
	return nil
}

// ForwardInto is linear's Into; a packed op reads its packing as Forward does.
func (o linearOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	if err := checkArity("linear", in, len(in)); err != nil {
		return err
	}
	if err := o.Check(in); err != nil {
		return err
	}
	x, w := in[0], in[1]
	if err := checkOutLast("linear", in, out, x, w.Dim(1)); err != nil {
		return err
	}
	o.into(out, in)
	return nil
}

// checkOutLast is checkOut for an output of x's shape with its last axis
// of size last.
func checkOutLast(op string, in []*tensor.Tensor, out, x *tensor.Tensor, last int) error {
	ok := out != nil && out.Rank() == x.Rank() && out.Dim(-1) == last
	for i := 0; ok && i < x.Rank()-1; i++ {
		ok = out.Dim(i) == x.Dim(i)
	}
	if !ok || out.DType() != x.DType() || out.Storage() != nil {
		shape := append(x.Shape()[:x.Rank()-1].Clone(), last)
		if out == nil {
			return Errorf(op, in, "ForwardInto a nil output")
		}
		return Errorf(op, in, "ForwardInto an output %v%v; want a host tensor %v%v", out.DType(), out.Shape(), x.DType(), shape)
	}
	return nil
}

// ForwardInto is conv2d's Into.
func (o *conv2dOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	if err := checkArity("conv2d", in, len(in)); err != nil {
		return err
	}
	dt, g, err := o.geom(in)
	if err != nil {
		return err
	}
	if err := checkOut("conv2d", in, out, dt, g.n, g.cout, g.OH, g.OW); err != nil {
		return err
	}
	k := g.kernel()
	if !k.DataWritesAll() {
		out.Fill(0)
	}
	if o.packed != nil && o.packed.w == in[1] {
		convPackedInto(g, in, o.packed, out)
		return nil
	}
	convInto(k, false, in, out)
	return nil
}

// ForwardInto is max and average pooling's Into.
func (o *pool2dOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	if err := checkArity(o.Name(), in, 1); err != nil {
		return err
	}
	dt, g, err := o.geom(in)
	if err != nil {
		return err
	}
	if err := checkOut(o.Name(), in, out, dt, in[0].Dim(0), in[0].Dim(1), g.OH, g.OW); err != nil {
		return err
	}
	o.into(g, in, out)
	return nil
}

// ForwardInto is reshape's Into: a copy of x's elements into out, whose
// shape must be the op's with any -1 resolved. (Forward returns a view;
// a plan makes reshapes of its own intermediates views too and copies
// only what it does not own, such as its inputs.)
func (o *reshapeOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	if err := checkArity("reshape", in, 1); err != nil {
		return err
	}
	ok := out != nil && out.DType() == in[0].DType() && out.Size() == in[0].Size() && out.Rank() == len(o.shape) && out.Storage() == nil
	for i := 0; ok && i < len(o.shape); i++ {
		ok = o.shape[i] == -1 || o.shape[i] == out.Dim(i)
	}
	if !ok {
		if out == nil {
			return Errorf("reshape", in, "ForwardInto a nil output")
		}
		return Errorf("reshape", in, "ForwardInto an output %v%v; want a host tensor %v of shape %v with %d elements", out.DType(), out.Shape(), in[0].DType(), o.shape, in[0].Size())
	}
	return out.CopyFrom(in[0])
}

// ForwardInto is global average pooling's Into.
func (globalAvgPool2dOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	dt, err := checkGlobalAvgPool(in)
	if err != nil {
		return err
	}
	if err := checkOut("global_avg_pool2d", in, out, dt, in[0].Dim(0), in[0].Dim(1)); err != nil {
		return err
	}
	globalAvgPoolInto(in[0], out)
	return nil
}

// ForwardInto is concat's Into: each input's rows of the joined axis
// copied to their place in out, block by block.
func (o *concatOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	if len(in) == 0 {
		return Errorf("concat", in, "want at least one input")
	}
	if err := checkArity("concat", in, len(in)); err != nil {
		return err
	}
	x := in[0]
	ax, err := tensor.Axis(o.axis, x.Rank())
	if err != nil {
		return Errorf("concat", in, "%v", err)
	}
	total := 0
	for _, t := range in {
		if t.DType() != x.DType() || t.Rank() != x.Rank() {
			return Errorf("concat", in, "want inputs of one dtype and rank")
		}
		for d := 0; d < x.Rank(); d++ {
			if d != ax && t.Dim(d) != x.Dim(d) {
				return Errorf("concat", in, "want equal dims except along axis %d", ax)
			}
		}
		total += t.Dim(ax)
	}
	ok := out != nil && out.DType() == x.DType() && out.Rank() == x.Rank() && out.Storage() == nil
	for d := 0; ok && d < x.Rank(); d++ {
		ok = out.Dim(d) == x.Dim(d) || d == ax && out.Dim(d) == total
	}
	if !ok {
		if out == nil {
			return Errorf("concat", in, "ForwardInto a nil output")
		}
		return Errorf("concat", in, "ForwardInto an output %v%v; want a host tensor of the inputs' dtype, joined to %d along axis %d", out.DType(), out.Shape(), total, ax)
	}
	outer := x.Shape()[:ax].Size()
	inner := x.Shape()[ax+1:].Size()
	switch dst := out.Raw().(type) {
	case []float32:
		concatInto(dst, in, outer, inner, total, ax)
	case []float64:
		concatInto(dst, in, outer, inner, total, ax)
	case []int32:
		concatInto(dst, in, outer, inner, total, ax)
	case []int64:
		concatInto(dst, in, outer, inner, total, ax)
	default:
		return Errorf("concat", in, "ForwardInto an output of dtype %v", out.DType())
	}
	return nil
}

// concatInto copies each input's [outer, d_i·inner] blocks into dst, of
// [outer, total·inner].
func concatInto[T tensor.Elem](dst []T, in []*tensor.Tensor, outer, inner, total, ax int) {
	from := 0
	for _, t := range in {
		src := tensor.Data[T](t)
		n := t.Dim(ax) * inner
		for b := 0; b < outer; b++ {
			copy(dst[b*total*inner+from:b*total*inner+from+n], src[b*n:(b+1)*n])
		}
		from += n
	}
}

// ForwardInto is embedding's Into: the ids read in place (int32 or int64),
// each checked against the table before any row is written.
func (o *embeddingOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	if err := checkArity("embedding", in, 2); err != nil {
		return err
	}
	if err := o.Check(in); err != nil {
		return err
	}
	table, ids := in[0], in[1]
	ok := out != nil && out.DType() == table.DType() && out.Rank() == ids.Rank()+1 && out.Dim(-1) == table.Dim(1) && out.Storage() == nil
	for i := 0; ok && i < ids.Rank(); i++ {
		ok = out.Dim(i) == ids.Dim(i)
	}
	if !ok {
		return Errorf("embedding", in, "ForwardInto an output; want a host tensor %v of the ids' shape and %d columns", table.DType(), table.Dim(1))
	}
	var err error
	switch ids.DType() {
	case tensor.Int32:
		err = embeddingInto(in, table, ids.Int32s(), out, o.padding)
	default:
		err = embeddingInto(in, table, ids.Int64s(), out, o.padding)
	}
	return err
}

func embeddingInto[I int32 | int64](in []*tensor.Tensor, table *tensor.Tensor, ids []I, out *tensor.Tensor, padding int) error {
	v := table.Dim(0)
	for j, i := range ids {
		if i < 0 || int(i) >= v {
			return Errorf("embedding", in, "id %d at position %d out of range [0, %d)", i, j, v)
		}
	}
	switch out.DType() {
	case tensor.Float32:
		embeddingLookup(table.Float32s(), out.Float32s(), ids, padding, table.Dim(1))
	case tensor.Float64:
		embeddingLookup(table.Float64s(), out.Float64s(), ids, padding, table.Dim(1))
	}
	return nil
}

// embeddingLookup writes row ids[j] of table [V, d] into row j of out,
// and zeros for the padding id.
func embeddingLookup[T tensor.Float, I int32 | int64](table, out []T, ids []I, padding, d int) {
	for j, i := range ids {
		if int(i) == padding {
			clear(out[j*d : (j+1)*d])
			continue
		}
		copy(out[j*d:(j+1)*d], table[int(i)*d:(int(i)+1)*d])
	}
}

// ForwardInto is sequence_pool's Into; max's argmax rows go to scratch.
func (o *sequencePoolOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	dt, err := o.validate(in)
	if err != nil {
		return err
	}
	x := in[0]
	ok := out != nil && out.DType() == dt && out.Rank() == x.Rank() && out.Dim(0) == len(o.offsets)-1 && out.Storage() == nil
	for i := 1; ok && i < x.Rank(); i++ {
		ok = out.Dim(i) == x.Dim(i)
	}
	if !ok {
		return Errorf("sequence_pool", in, "ForwardInto an output; want a host tensor %v of %d rows of x's row shape", dt, len(o.offsets)-1)
	}
	inner := x.Shape()[1:].Size()
	var arg *[]int
	if o.kind == SequencePoolMax {
		arg = getScratch[int](out.Size())
		defer putScratch(arg)
	}
	var args []int
	if arg != nil {
		args = *arg
	}
	switch dt {
	case tensor.Float32:
		seqPoolInto(o.kind, o.pad, o.offsets, inner, x.Float32s(), out.Float32s(), args)
	case tensor.Float64:
		seqPoolInto(o.kind, o.pad, o.offsets, inner, x.Float64s(), out.Float64s(), args)
	}
	return nil
}
