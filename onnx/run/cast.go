package run

import (
	"math"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/tensor"
)

// The 16-bit float element types, held in float32 (see computeElem).
const (
	elemFloat16  onnx.ElemType = 10
	elemBFloat16 onnx.ElemType = 16
)

// computeElem is the element type the importer computes a value of ONNX
// type e in: FLOAT16 and BFLOAT16 are stored and computed as FLOAT (the
// reader widens their initializers to float32 exactly, and Cast to them
// rounds to a value they hold), every other type as itself. Compile maps
// initializers, graph inputs and Constant tensors through it, so no op
// sees a 16-bit type.
func computeElem(e onnx.ElemType) onnx.ElemType {
	if e == elemFloat16 || e == elemBFloat16 {
		return elemFloat
	}
	return e
}

// ONNX Cast (opsets 13, 19 and 21; onnx/docs/Operators.md#Cast) between
// FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT32, INT64 and BOOL:
//   - to a float type, round to nearest, ties to even, once from the
//     source value (a DOUBLE or INT64 is not rounded through float32), a
//     value beyond the type's range becoming an infinity of its sign;
//     FLOAT16 and BFLOAT16 results are kept in float32 (onnx.Float16Bits,
//     onnx.BFloat16Bits);
//   - float to integer truncates toward zero; NaN gives 0 and a value
//     beyond the target's range its nearest end (the spec leaves both
//     undefined; this is what a saturating conversion gives);
//   - integer to integer keeps the low bits (the spec's "discard higher
//     bits and reinterpret");
//   - to BOOL, zero is false and everything else, NaN included, true;
//     from BOOL, false is 0 and true 1.
//
// saturate (opset 19) applies to the float8 types only, which Plumb does
// not read, so it is accepted and has no effect.
func init() {
	register("Cast", opDef{compile: compileCast})
}

func compileCast(c *ctx) (kernel, error) {
	if err := c.arity(1, 1, 1); err != nil {
		return nil, err
	}
	if err := c.n.allow("to", "saturate"); err != nil {
		return nil, err
	}
	to, err := c.n.intAttr("to", 0)
	if err != nil {
		return nil, err
	}
	elem := elemFromInt(to)
	dt, ok := runtimeDType(computeElem(elem))
	if !ok {
		return nil, c.n.errorf("to = %v is not supported; expected FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT32, INT64 or BOOL", elem)
	}
	c.out[0] = info{elem: computeElem(elem), shape: c.in[0].shape}
	if isIntElem(elem) && isIntElem(c.in[0].elem) {
		c.out[0].part = c.in[0].part
	}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		y := newTensor(dt, []int(in[0].Shape()))
		castInto(y, in[0], elem)
		return []*tensor.Tensor{y}, nil
	}, nil
}

// castInto writes x cast to ONNX type elem into y, of elem's runtime dtype
// and x's size.
func castInto(y, x *tensor.Tensor, elem onnx.ElemType) {
	n := x.Size()
	if x.DType().IsFloat() {
		for i := range n {
			castFloat(y, i, x.At(i), elem)
		}
		return
	}
	for i := range n {
		castInt(y, i, intAt(x, i), elem)
	}
}

// castFloat stores the float v cast to elem as element i of y.
func castFloat(y *tensor.Tensor, i int, v float64, elem onnx.ElemType) {
	switch elem {
	case elemBool:
		y.Int64s()[i] = b2i(v != 0)
	case elemInt32:
		y.Int32s()[i] = int32(truncSat(v, math.MinInt32, math.MaxInt32))
	case elemInt64:
		y.Int64s()[i] = truncSat(v, math.MinInt64, math.MaxInt64)
	case elemFloat:
		y.Float32s()[i] = float32(v)
	case elemDouble:
		y.Float64s()[i] = v
	case elemFloat16:
		y.Float32s()[i] = onnx.Float16ToFloat32(onnx.Float16Bits(v))
	case elemBFloat16:
		y.Float32s()[i] = onnx.BFloat16ToFloat32(onnx.BFloat16Bits(v))
	}
}

// castInt stores the integer (or BOOL, 0 or 1) v cast to elem as element
// i of y.
func castInt(y *tensor.Tensor, i int, v int64, elem onnx.ElemType) {
	switch elem {
	case elemBool:
		y.Int64s()[i] = b2i(v != 0)
	case elemInt32:
		y.Int32s()[i] = int32(v)
	case elemInt64:
		y.Int64s()[i] = v
	case elemFloat:
		y.Float32s()[i] = float32(v) // one rounding, to nearest even
	case elemDouble:
		y.Float64s()[i] = float64(v)
	case elemFloat16:
		y.Float32s()[i] = onnx.Float16ToFloat32(onnx.Float16Bits(onnx.ExactFloat64(v)))
	case elemBFloat16:
		y.Float32s()[i] = onnx.BFloat16ToFloat32(onnx.BFloat16Bits(onnx.ExactFloat64(v)))
	}
}

// truncSat truncates v toward zero and clamps it to [lo, hi]; NaN is 0.
func truncSat(v float64, lo, hi int64) int64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v <= float64(lo):
		return lo
	case v >= float64(hi): // float64(MaxInt64) is 2^63, beyond it
		return hi
	}
	return int64(math.Trunc(v))
}
