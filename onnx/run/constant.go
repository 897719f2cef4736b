package run

import (
	"fmt"
	"math"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/tensor"
)

// ONNX Constant (a tensor in attribute value, or a scalar or list in
// value_float(s)/value_int(s)), ConstantOfShape and Range. All three are
// known at compile time whenever their inputs are, and fold.
func init() {
	register("Constant", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(0, 0, 1); err != nil {
			return nil, err
		}
		if len(c.n.Attrs) != 1 {
			return nil, c.n.errorf("has %d attributes; expected exactly one of value, value_float, value_floats, value_int, value_ints", len(c.n.Attrs))
		}
		var t *tensor.Tensor
		elem := elemFloat
		switch v := c.n.Attrs[0].Value.(type) {
		case *tensor.Tensor:
			t, elem = v, attrElem(c.n.Attrs[0])
		case float32:
			t = tensor.Scalar(v)
		case []float32:
			t = tensor.MustFromSlice(append([]float32(nil), v...), len(v))
		case int64:
			t, elem = tensor.Scalar(v), elemInt64
		case []int64:
			t, elem = tensor.MustFromSlice(append([]int64(nil), v...), len(v)), elemInt64
		}
		switch name := c.n.Attrs[0].Name; {
		case t == nil:
			return nil, c.n.errorf("attribute %q (%s) is not supported; expected value, value_float, value_floats, value_int or value_ints", name, attrKind(c.n.Attrs[0].Value))
		case name != "value" && name != "value_float" && name != "value_floats" && name != "value_int" && name != "value_ints":
			return nil, c.n.errorf("attribute %q is not supported; expected value, value_float, value_floats, value_int or value_ints", name)
		}
		c.out[0] = constInfo(t, elem)
		return func([]*tensor.Tensor) ([]*tensor.Tensor, error) { return []*tensor.Tensor{t}, nil }, nil
	}})

	register("ConstantOfShape", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(1, 1, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow("value"); err != nil {
			return nil, err
		}
		fill, elem := tensor.Scalar(float32(0)), elemFloat
		for _, a := range c.n.Attrs {
			t, ok := a.Value.(*tensor.Tensor)
			if !ok || t.Size() != 1 {
				return nil, c.n.errorf("attribute \"value\" is %s; expected a one-element TENSOR", attrKind(a.Value))
			}
			fill, elem = t, attrElem(a)
		}
		if e := c.in[0].elem; e != 0 && e != elemInt64 {
			return nil, c.n.errorf("input 0 %q (shape) is %v; expected INT64", c.n.Inputs[0], e)
		}
		c.out[0] = info{elem: elem, shape: shapeFromPart(c.in[0])}
		return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
			shape, err := dimsOf(in[0])
			if err != nil {
				return nil, err
			}
			y, err := tensor.New(fill.DType(), shape...)
			if err != nil {
				return nil, err
			}
			if !fill.DType().IsFloat() {
				v := intAt(fill, 0)
				for i := range y.Size() {
					setInt(y, i, v)
				}
			} else {
				y.Fill(fill.At(0))
			}
			return []*tensor.Tensor{y}, nil
		}, nil
	}})

	register("Range", opDef{compile: func(c *ctx) (kernel, error) {
		if err := c.arity(3, 3, 1); err != nil {
			return nil, err
		}
		if err := c.n.allow(); err != nil {
			return nil, err
		}
		if err := c.sameElem(0, 1, 2); err != nil {
			return nil, err
		}
		c.out[0] = info{elem: c.in[0].elem, shape: []int{-1}}
		if c.in[0].konst != nil && c.in[1].konst != nil && c.in[2].konst != nil {
			n, err := rangeLen(c.in[0].konst, c.in[1].konst, c.in[2].konst)
			if err != nil {
				return nil, c.n.wrap(err)
			}
			c.out[0].shape = []int{n}
		}
		return rangeKernel, nil
	}})
}

// rangeLen is the length of ONNX Range's output, max(ceil((limit -
// start) / delta), 0), checked against maxRange.
func rangeLen(start, limit, delta *tensor.Tensor) (int, error) {
	for i, t := range []*tensor.Tensor{start, limit, delta} {
		if t.Size() != 1 {
			return 0, fmt.Errorf("input %d is %v; expected a scalar", i, t.Shape())
		}
	}
	if !start.DType().IsFloat() {
		s, l, d := intAt(start, 0), intAt(limit, 0), intAt(delta, 0)
		if d == 0 {
			return 0, fmt.Errorf("delta is 0; expected a nonzero step")
		}
		n := max((l-s+d-int64(sign(d, 0)))/d, 0)
		if n > maxRange {
			return 0, fmt.Errorf("range of %d elements; expected at most %d", n, maxRange)
		}
		return int(n), nil
	}
	s, l, d := start.At(0), limit.At(0), delta.At(0)
	f := math.Ceil((l - s) / d)
	if d == 0 || math.IsNaN(f) || f > maxRange {
		return 0, fmt.Errorf("start %v, limit %v, delta %v; expected a finite range of at most %d elements", s, l, d, maxRange)
	}
	return int(max(f, 0)), nil
}

// rangeKernel is ONNX Range: start, start+delta, ... short of limit.
func rangeKernel(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
	n, err := rangeLen(in[0], in[1], in[2])
	if err != nil {
		return nil, err
	}
	y := newTensor(in[0].DType(), []int{n})
	if !y.DType().IsFloat() {
		s, d := intAt(in[0], 0), intAt(in[2], 0)
		for i := range n {
			setInt(y, i, s+int64(i)*d)
		}
	} else {
		s, d := in[0].At(0), in[2].At(0)
		for i := range n {
			y.SetAt(i, s+float64(i)*d)
		}
	}
	return []*tensor.Tensor{y}, nil
}

// attrElem is the ONNX element type of a TENSOR attribute a.
func attrElem(a onnx.Attr) onnx.ElemType {
	if a.Elem != 0 {
		return computeElem(a.Elem)
	}
	return elemOf(a.Value.(*tensor.Tensor).DType())
}

// maxElems bounds the tensors that a shape input alone sizes
// (ConstantOfShape, Expand, Reshape's target).
const maxElems = 1 << 31

// maxRange bounds Range's output, which its inputs alone decide.
const maxRange = 1 << 28

// shapeFromPart is the output shape a shape input (ConstantOfShape,
// Expand, Reshape) gives as far as its elements are known: nil when its
// length is unknown.
func shapeFromPart(in info) []int {
	if v, ok := in.ints(); ok {
		out := make([]int, len(v))
		for i, d := range v {
			out[i] = int(d)
		}
		return out
	}
	if in.part == nil {
		if len(in.shape) == 1 && in.shape[0] >= 0 {
			out := make([]int, in.shape[0])
			for i := range out {
				out[i] = -1
			}
			return out
		}
		return nil
	}
	out := make([]int, len(in.part))
	for i, d := range in.part {
		out[i] = int(d)
		if d == unk || d < 0 {
			out[i] = -1
		}
	}
	return out
}

// dimsOf reads a run-time shape tensor: non-negative int64 sizes whose
// product stays addressable.
func dimsOf(t *tensor.Tensor) ([]int, error) {
	if t.DType().IsFloat() || t.Rank() > 1 {
		return nil, fmt.Errorf("shape is %v %v; expected a 1-D int64 tensor", t.DType(), t.Shape())
	}
	out := make([]int, t.Size())
	n := int64(1)
	for i := range out {
		d := intAt(t, i)
		if d < 0 || (d > 0 && n > maxElems/d) {
			return nil, fmt.Errorf("shape %v; expected sizes of at least 0 with a product of at most %d", t, maxElems)
		}
		n *= d
		out[i] = int(d)
	}
	return out, nil
}
