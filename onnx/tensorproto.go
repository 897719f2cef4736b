package onnx

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/plumbml/plumb/onnx/internal/pb"
	"github.com/plumbml/plumb/tensor"
)

// dtypes maps the ONNX element types Plumb stores to its dtypes. BOOL,
// which Plumb's tensors lack, is held as int64 0 and 1; FLOAT16 and
// BFLOAT16, which it lacks too, are widened to float32 (see half.go).
var dtypes = map[pb.TensorProto_DataType]tensor.DType{
	pb.TensorProto_FLOAT:    tensor.Float32,
	pb.TensorProto_DOUBLE:   tensor.Float64,
	pb.TensorProto_INT32:    tensor.Int32,
	pb.TensorProto_INT64:    tensor.Int64,
	pb.TensorProto_BOOL:     tensor.Int64,
	pb.TensorProto_FLOAT16:  tensor.Float32,
	pb.TensorProto_BFLOAT16: tensor.Float32,
}

// fileSize is the bytes one element of et takes in raw_data or external
// data: a BOOL takes one, a FLOAT16 or BFLOAT16 two (onnx.proto), the
// others their dtype's size.
func fileSize(et pb.TensorProto_DataType, dt tensor.DType) int {
	switch et {
	case pb.TensorProto_BOOL:
		return 1
	case pb.TensorProto_FLOAT16, pb.TensorProto_BFLOAT16:
		return 2
	}
	return dt.Size()
}

// isHalf reports whether et is one of the 16-bit float types.
func isHalf(et pb.TensorProto_DataType) bool {
	return et == pb.TensorProto_FLOAT16 || et == pb.TensorProto_BFLOAT16
}

// halfValue is the float32 value of the 16-bit pattern h of type et.
func halfValue(et pb.TensorProto_DataType, h uint16) float32 {
	if et == pb.TensorProto_BFLOAT16 {
		return BFloat16ToFloat32(h)
	}
	return Float16ToFloat32(h)
}

// fromHalves decodes little-endian 16-bit patterns of type et, whose
// length the caller has checked, into a float32 tensor of shape.
func fromHalves(et pb.TensorProto_DataType, raw []byte, shape []int) (*tensor.Tensor, error) {
	v := make([]float32, len(raw)/2)
	for i := range v {
		v[i] = halfValue(et, binary.LittleEndian.Uint16(raw[2*i:]))
	}
	return build(v, shape)
}

// tensor converts a TensorProto (an initializer, or a TENSOR attribute)
// to a *tensor.Tensor. The declared dims times the element size are
// checked against the bytes the proto actually holds (raw_data, the typed
// field, or the external file's checked length) before anything is
// allocated, so a tensor never costs more memory than its data occupies.
// where names the tensor in errors. Element encoding follows onnx.proto:
// raw_data is little-endian; float_data holds FLOAT, double_data DOUBLE,
// int32_data INT32, BOOL, FLOAT16 and BFLOAT16 (one element per entry, a
// 16-bit type as its bit pattern in the low 16 bits), int64_data INT64; a
// BOOL is one byte in raw_data, a FLOAT16 or BFLOAT16 two. A BOOL tensor,
// held as int64, takes 8 bytes an element in memory for the file's 1; a
// 16-bit float, widened to float32, 4 for the file's 2.
func (c *converter) tensor(t *pb.TensorProto, where string) (*tensor.Tensor, error) {
	et := pb.TensorProto_DataType(t.GetDataType())
	dt, ok := dtypes[et]
	if !ok {
		return nil, fmt.Errorf("onnx: %s has element type %v, which Plumb does not support yet; expected FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT32, INT64 or BOOL", where, ElemType(et))
	}
	if t.GetSegment() != nil {
		return nil, fmt.Errorf("onnx: %s is a segment of a larger tensor; expected a whole tensor", where)
	}
	shape := make([]int, len(t.GetDims()))
	n := int64(1)
	for i, d := range t.GetDims() {
		if d < 0 || int64(int(d)) != d {
			return nil, fmt.Errorf("onnx: %s has dims %v; expected sizes of at least 0", where, t.GetDims())
		}
		shape[i] = int(d)
		if n != 0 && d != 0 && n > math.MaxInt64/int64(dt.Size())/d {
			return nil, fmt.Errorf("onnx: %s has dims %v, more bytes than can be addressed", where, t.GetDims())
		}
		n *= d
	}
	esize := fileSize(et, dt)
	want := n * int64(esize) // cannot overflow: checked above
	switch {
	case t.GetDataLocation() == pb.TensorProto_EXTERNAL:
		raw, err := c.readExternal(t, want, where)
		if err != nil {
			return nil, err
		}
		if et == pb.TensorProto_BOOL {
			return fromBools(raw, shape)
		}
		if isHalf(et) {
			return fromHalves(et, raw, shape)
		}
		return fromRaw(raw, dt, shape)
	case t.RawData != nil:
		if int64(len(t.RawData)) != want {
			return nil, fmt.Errorf("onnx: %s declares dims %v (%d elements of %d bytes, %d bytes) but raw_data holds %d bytes", where, t.GetDims(), n, esize, want, len(t.RawData))
		}
		if et == pb.TensorProto_BOOL {
			return fromBools(t.RawData, shape)
		}
		if isHalf(et) {
			return fromHalves(et, t.RawData, shape)
		}
		return fromRaw(t.RawData, dt, shape)
	}
	if et == pb.TensorProto_BOOL {
		if int64(len(t.GetInt32Data())) != n {
			return nil, fmt.Errorf("onnx: %s declares dims %v (%d elements) but its BOOL data holds %d elements", where, t.GetDims(), n, len(t.GetInt32Data()))
		}
		v := make([]int64, n)
		for i, b := range t.GetInt32Data() {
			if b != 0 {
				v[i] = 1
			}
		}
		return build(v, shape)
	}
	if isHalf(et) {
		if int64(len(t.GetInt32Data())) != n {
			return nil, fmt.Errorf("onnx: %s declares dims %v (%d elements) but its %v data holds %d elements", where, t.GetDims(), n, ElemType(et), len(t.GetInt32Data()))
		}
		v := make([]float32, n)
		for i, h := range t.GetInt32Data() {
			if h < 0 || h > math.MaxUint16 {
				return nil, fmt.Errorf("onnx: %s element %d is %d in int32_data; expected a %v bit pattern, 0 to 65535", where, i, h, ElemType(et))
			}
			v[i] = halfValue(et, uint16(h))
		}
		return build(v, shape)
	}
	var have int
	switch dt {
	case tensor.Float32:
		have = len(t.GetFloatData())
	case tensor.Float64:
		have = len(t.GetDoubleData())
	case tensor.Int32:
		have = len(t.GetInt32Data())
	case tensor.Int64:
		have = len(t.GetInt64Data())
	}
	if int64(have) != n {
		return nil, fmt.Errorf("onnx: %s declares dims %v (%d elements) but its %v data holds %d elements", where, t.GetDims(), n, ElemType(et), have)
	}
	switch dt {
	case tensor.Float32:
		return build(append([]float32(nil), t.GetFloatData()...), shape)
	case tensor.Float64:
		return build(append([]float64(nil), t.GetDoubleData()...), shape)
	case tensor.Int32:
		return build(append([]int32(nil), t.GetInt32Data()...), shape)
	default:
		return build(append([]int64(nil), t.GetInt64Data()...), shape)
	}
}

// fromRaw decodes little-endian raw bytes, whose length the caller has
// checked, into a tensor of dt and shape.
func fromRaw(raw []byte, dt tensor.DType, shape []int) (*tensor.Tensor, error) {
	le := binary.LittleEndian
	switch dt {
	case tensor.Float32:
		v := make([]float32, len(raw)/4)
		for i := range v {
			v[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
		return build(v, shape)
	case tensor.Float64:
		v := make([]float64, len(raw)/8)
		for i := range v {
			v[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
		return build(v, shape)
	case tensor.Int32:
		v := make([]int32, len(raw)/4)
		for i := range v {
			v[i] = int32(le.Uint32(raw[4*i:]))
		}
		return build(v, shape)
	default:
		v := make([]int64, len(raw)/8)
		for i := range v {
			v[i] = int64(le.Uint64(raw[8*i:]))
		}
		return build(v, shape)
	}
}

// fromBools decodes BOOL bytes (nonzero is true) into int64 0 and 1.
func fromBools(raw []byte, shape []int) (*tensor.Tensor, error) {
	v := make([]int64, len(raw))
	for i, b := range raw {
		if b != 0 {
			v[i] = 1
		}
	}
	return build(v, shape)
}

// build wraps data as a tensor of shape; no dims is a 0-d scalar.
func build[T tensor.Elem](data []T, shape []int) (*tensor.Tensor, error) {
	if len(shape) == 0 {
		return tensor.Scalar(data[0]), nil
	}
	return tensor.FromSlice(data, shape...)
}
