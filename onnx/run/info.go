package run

import (
	"math"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/tensor"
)

// The ONNX element types (TensorProto.DataType) the importer computes in.
const (
	elemFloat  onnx.ElemType = 1
	elemInt32  onnx.ElemType = 6
	elemInt64  onnx.ElemType = 7
	elemBool   onnx.ElemType = 9
	elemDouble onnx.ElemType = 11
)

// runtimeDType is the Plumb dtype that holds values of ONNX type e: BOOL
// is held as int64 0 and 1, since tensor has no boolean dtype.
func runtimeDType(e onnx.ElemType) (tensor.DType, bool) {
	switch e {
	case elemFloat:
		return tensor.Float32, true
	case elemDouble:
		return tensor.Float64, true
	case elemInt32:
		return tensor.Int32, true
	case elemInt64, elemBool:
		return tensor.Int64, true
	}
	return 0, false
}

// elemOf is the ONNX type of a Plumb dtype (int64 is INT64, never BOOL).
func elemOf(dt tensor.DType) onnx.ElemType {
	switch dt {
	case tensor.Float32:
		return elemFloat
	case tensor.Float64:
		return elemDouble
	case tensor.Int32:
		return elemInt32
	}
	return elemInt64
}

func isFloatElem(e onnx.ElemType) bool { return e == elemFloat || e == elemDouble }

func isIntElem(e onnx.ElemType) bool { return e == elemInt32 || e == elemInt64 }

// unk marks an element of info.part whose value is not known at compile
// time.
const unk = math.MinInt64

// maxPart is the most elements of an int tensor tracked element by
// element: shape vectors are short.
const maxPart = 64

// info is what compiling knows of a value: its element type (0 when
// unknown), its shape (nil when the rank is unknown; -1 for a dimension
// not known before run time), its value when known (konst), and, for a
// small int tensor of known shape, its elements one by one (part, unk for
// those known only at run time).
type info struct {
	absent bool // an optional input left out
	elem   onnx.ElemType
	shape  []int
	konst  *tensor.Tensor
	part   []int64
}

// constInfo is the info of a known tensor t of ONNX type elem.
func constInfo(t *tensor.Tensor, elem onnx.ElemType) info {
	in := info{elem: elem, shape: []int(t.Shape().Clone()), konst: t}
	if !t.DType().IsFloat() && t.Size() <= maxPart {
		in.part = make([]int64, t.Size())
		for i := range in.part {
			in.part[i] = intAt(t, i)
		}
	}
	if in.shape == nil {
		in.shape = []int{}
	}
	return in
}

// elemOr is in's element type, or e when it is unknown.
func (in info) elemOr(e onnx.ElemType) onnx.ElemType {
	if in.elem != 0 {
		return in.elem
	}
	return e
}

// settle makes a fully known part a constant.
func (in *info) settle() {
	if in.konst != nil || in.part == nil || in.shape == nil {
		return
	}
	for _, v := range in.part {
		if v == unk {
			return
		}
	}
	if size(in.shape) != len(in.part) {
		return
	}
	dt, ok := runtimeDType(in.elem)
	if !ok || dt.IsFloat() {
		return
	}
	t := tensor.Zeros(dt, in.shape...)
	for i, v := range in.part {
		setInt(t, i, v)
	}
	in.konst = t
}

// known reports whether every dim of shape is known.
func known(shape []int) bool {
	if shape == nil {
		return false
	}
	for _, d := range shape {
		if d < 0 {
			return false
		}
	}
	return true
}

// size is the product of shape's dims, saturating at math.MaxInt, so that
// a size check cannot be fooled by an overflow (with unknown dims it is
// meaningless).
func size(shape []int) int {
	n := 1
	for _, d := range shape {
		if d != 0 && n > math.MaxInt/max(d, 1) {
			return math.MaxInt
		}
		n *= d
	}
	return n
}

// ints is in's value as int64s when every element is known.
func (in info) ints() ([]int64, bool) {
	if in.konst != nil && !in.konst.DType().IsFloat() {
		out := make([]int64, in.konst.Size())
		for i := range out {
			out[i] = intAt(in.konst, i)
		}
		return out, true
	}
	if in.part == nil {
		return nil, false
	}
	for _, v := range in.part {
		if v == unk {
			return nil, false
		}
	}
	return in.part, true
}

// intAt reads element i of an int32 or int64 tensor exactly.
func intAt(t *tensor.Tensor, i int) int64 {
	switch t.DType() {
	case tensor.Int64:
		return t.Int64s()[i]
	case tensor.Int32:
		return int64(t.Int32s()[i])
	}
	return int64(t.At(i))
}

// setInt writes element i of an int32 or int64 tensor exactly.
func setInt(t *tensor.Tensor, i int, v int64) {
	switch t.DType() {
	case tensor.Int64:
		t.Int64s()[i] = v
	case tensor.Int32:
		t.Int32s()[i] = int32(v)
	default:
		t.SetAt(i, float64(v))
	}
}

// elemFromInt is the element type an INT attribute (Cast's to) names.
func elemFromInt(v int64) onnx.ElemType {
	if v < 0 || v > math.MaxInt32 {
		return onnx.ElemType(-1)
	}
	return onnx.ElemType(v)
}

// compatible reports whether compile-time shapes a and b may be equal: an
// unknown rank or dim matches anything.
func compatible(a, b []int) bool {
	if a == nil || b == nil {
		return true
	}
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] >= 0 && b[i] >= 0 && a[i] != b[i] {
			return false
		}
	}
	return true
}
