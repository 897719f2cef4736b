package onnx

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	"github.com/plumbml/plumb/onnx/internal/pb"
	"github.com/plumbml/plumb/tensor"
)

// expected are the initializers make.py wrote, by model and name.
type expected map[string]map[string]struct {
	Dims   []int     `json:"dims"`
	Values []float64 `json:"values"`
}

func loadValues(t *testing.T) expected {
	t.Helper()
	b, err := os.ReadFile("testdata/values.json")
	require.NoError(t, err)
	var v expected
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

func shapeOf(dims ...any) []Dim {
	out := make([]Dim, len(dims))
	for i, d := range dims {
		switch d := d.(type) {
		case int:
			out[i] = Dim{Size: int64(d)}
		case string:
			out[i] = Dim{Size: -1, Param: d}
		}
	}
	return out
}

func TestLoadModels(t *testing.T) {
	values := loadValues(t)
	mlpOps := map[string]int{"Gemm": 2, "Relu": 1}
	for _, tc := range []struct {
		file, values string
		opset        int64
		in, out      Value
		ops          map[string]int
	}{
		{"mlp.onnx", "mlp", 17, Value{"x", ElemType(pb.TensorProto_FLOAT), shapeOf(2, 4)}, Value{"y", ElemType(pb.TensorProto_FLOAT), shapeOf(2, 3)}, mlpOps},
		{"external.onnx", "external", 17, Value{"x", ElemType(pb.TensorProto_FLOAT), shapeOf(2, 4)}, Value{"y", ElemType(pb.TensorProto_FLOAT), shapeOf(2, 3)}, mlpOps},
		{"symbolic.onnx", "symbolic", 21, Value{"x", ElemType(pb.TensorProto_FLOAT), shapeOf("batch", 4)}, Value{"y", ElemType(pb.TensorProto_FLOAT), shapeOf("batch", 3)}, mlpOps},
		{"convbn.onnx", "convbn", 13, Value{"x", ElemType(pb.TensorProto_FLOAT), shapeOf(1, 3, 8, 8)}, Value{"y", ElemType(pb.TensorProto_FLOAT), shapeOf(1, 4)},
			map[string]int{"Conv": 1, "BatchNormalization": 1, "Relu": 1, "GlobalAveragePool": 1, "Reshape": 1}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			m, err := Load(filepath.Join("testdata", tc.file))
			require.NoError(t, err)
			s := Inspect(m)
			assert.Equal(t, tc.opset, s.Opset)
			assert.Equal(t, []Value{tc.in}, s.Inputs)
			assert.Equal(t, []Value{tc.out}, s.Outputs)
			assert.Equal(t, tc.ops, s.OpCounts)
			var ops []string
			for op := range tc.ops {
				ops = append(ops, op)
			}
			assert.ElementsMatch(t, ops, s.Unsupported, "no op is supported yet")

			want := values[tc.values]
			require.Len(t, m.Graph.Initializers, len(want))
			for _, in := range m.Graph.Initializers {
				w, ok := want[in.Name]
				require.True(t, ok, in.Name)
				assert.Equal(t, tensor.Shape(w.Dims), in.Tensor.Shape(), in.Name)
				require.Equal(t, len(w.Values), in.Tensor.Size(), in.Name)
				for i, v := range w.Values {
					// float32 values were written as their exact float64.
					require.Equal(t, v, in.Tensor.At(i), "%s[%d]", in.Name, i)
				}
			}
		})
	}
}

func TestDTypesAndAttrs(t *testing.T) {
	m, err := Load("testdata/convbn.onnx")
	require.NoError(t, err)
	g := m.Graph
	assert.Equal(t, tensor.Float32, g.Initializer("conv.W").DType())
	assert.Equal(t, tensor.Float64, g.Initializer("unused.f64").DType())
	assert.Equal(t, []int32{7, -2}, g.Initializer("unused.i32").Int32s())
	assert.Equal(t, []int64{1, 4}, g.Initializer("shape").Int64s())
	assert.Nil(t, g.Initializer("nope"))

	conv := g.Nodes[0]
	assert.Equal(t, Node{Index: 0, Name: "conv", OpType: "Conv", Inputs: []string{"x", "conv.W", "conv.b"}, Outputs: []string{"c"},
		Attrs: []Attr{{Name: "kernel_shape", Value: []int64{3, 3}}, {Name: "pads", Value: []int64{1, 1, 1, 1}}, {Name: "strides", Value: []int64{1, 1}}}}, conv)
	eps, ok := g.Nodes[1].Attr("epsilon")
	assert.True(t, ok)
	assert.Equal(t, float32(1e-5), eps)

	m, err = Load("testdata/mlp.onnx")
	require.NoError(t, err)
	tb, _ := m.Graph.Nodes[0].Attr("transB")
	assert.Equal(t, int64(0), tb)
}

func TestSummaryString(t *testing.T) {
	m, err := Load("testdata/symbolic.onnx")
	require.NoError(t, err)
	assert.Equal(t, "opset: 21\ninput x: FLOAT [batch, 4]\noutput y: FLOAT [batch, 3]\nop Gemm: 2\nop Relu: 1\nunsupported: Gemm, Relu\n", Inspect(m).String())
}

// readPB decodes a test model's protobuf for a test to corrupt.
func readPB(t *testing.T, name string) *pb.ModelProto {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var m pb.ModelProto
	require.NoError(t, proto.Unmarshal(b, &m))
	return &m
}

func decodePB(t *testing.T, m *pb.ModelProto, opts Options) (*Model, error) {
	t.Helper()
	b, err := proto.Marshal(m)
	require.NoError(t, err)
	return Decode(bytes.NewReader(b), int64(len(b)), opts)
}

// externalDir copies external.onnx and external.bin into a temporary
// directory, with the model nested one level down (so that "../" has
// somewhere to escape to), and returns the model's directory.
func externalDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "model")
	require.NoError(t, os.Mkdir(dir, 0o755))
	b, err := os.ReadFile("testdata/external.bin")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "external.bin"), b, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "..", "escape.bin"), b, 0o644))
	return dir
}

func setExternal(tp *pb.TensorProto, kv ...string) {
	tp.ExternalData = nil
	for i := 0; i < len(kv); i += 2 {
		tp.ExternalData = append(tp.ExternalData, &pb.StringStringEntryProto{Key: proto.String(kv[i]), Value: proto.String(kv[i+1])})
	}
}

func TestHostile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(m *pb.ModelProto)
		opts   Options
		want   []string
	}{
		{"dims larger than raw_data", func(m *pb.ModelProto) { m.Graph.Initializer[0].Dims[0] = 5 },
			Options{}, []string{`initializer "W1"`, "dims [5 8]", "160 bytes", "raw_data holds 128 bytes"}},
		{"huge dims", func(m *pb.ModelProto) { m.Graph.Initializer[0].Dims = []int64{1 << 40, 1 << 40} },
			Options{}, []string{`initializer "W1"`, "more bytes than can be addressed"}},
		{"negative dim", func(m *pb.ModelProto) { m.Graph.Initializer[0].Dims[0] = -1 },
			Options{}, []string{`initializer "W1"`, "expected sizes of at least 0"}},
		{"typed data short", func(m *pb.ModelProto) {
			w := m.Graph.Initializer[1]
			w.RawData, w.FloatData = nil, []float32{1, 2}
		}, Options{}, []string{`initializer "b1"`, "(8 elements)", "FLOAT data holds 2 elements"}},
		{"model over the limit", func(m *pb.ModelProto) {}, Options{MaxModelBytes: 100}, []string{"over the limit of 100 bytes"}},
		{"unsupported opset", func(m *pb.ModelProto) { m.OpsetImport[0].Version = proto.Int64(22) }, Options{},
			[]string{`domain "ai.onnx" version 22`, "expected ai.onnx versions 11 to 21"}},
		{"no opset", func(m *pb.ModelProto) { m.OpsetImport = nil }, Options{}, []string{"imports no ai.onnx opset"}},
		{"no graph", func(m *pb.ModelProto) { m.Graph = nil }, Options{}, []string{"has no graph"}},
		{"attribute of an unsupported type", func(m *pb.ModelProto) {
			n := m.Graph.Node[1]
			n.Attribute = append(n.Attribute, &pb.AttributeProto{Name: proto.String("tp"), Type: pb.AttributeProto_TYPE_PROTO.Enum()})
		}, Options{}, []string{`node 1 "relu1" (Relu, opset 17): attribute "tp"`, "TYPE_PROTO", "expected FLOAT, INT"}},
		{"uint8 tensor attribute", func(m *pb.ModelProto) {
			m.Graph.Node = append(m.Graph.Node, &pb.NodeProto{Name: proto.String("k"), OpType: proto.String("Constant"), Output: []string{"k"},
				Attribute: []*pb.AttributeProto{{Name: proto.String("value"), Type: pb.AttributeProto_TENSOR.Enum(),
					T: &pb.TensorProto{DataType: proto.Int32(int32(pb.TensorProto_UINT8)), Dims: []int64{1}, RawData: []byte{0}}}}})
		}, Options{}, []string{`node 3 "k" (Constant, opset 17): attribute "value"`, "UINT8", "expected FLOAT, DOUBLE, FLOAT16, BFLOAT16, INT32, INT64 or BOOL"}},
		{"sequence input", func(m *pb.ModelProto) {
			m.Graph.Input[0].Type = &pb.TypeProto{Value: &pb.TypeProto_SequenceType{SequenceType: &pb.TypeProto_Sequence{}}}
		}, Options{}, []string{`input "x" is not a tensor`}},
		{"external without a directory", func(m *pb.ModelProto) {}, Options{}, []string{`initializer "W1"`, `external file "external.bin"`, "no directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := "mlp.onnx"
			if strings.HasPrefix(tc.name, "external") {
				file = "external.onnx"
			}
			m := readPB(t, file)
			tc.mutate(m)
			_, err := decodePB(t, m, tc.opts)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestExternalHostile(t *testing.T) {
	dir := externalDir(t)
	abs, err := filepath.Abs(filepath.Join(dir, "external.bin"))
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	symlinkOK := os.Symlink(filepath.Join(dir, "..", "escape.bin"), filepath.Join(dir, "link.bin")) == nil
	for _, tc := range []struct {
		name string
		kv   []string
		opts Options
		want []string
	}{
		{"dot-dot escape", []string{"location", "../escape.bin", "offset", "0", "length", "128"}, Options{}, []string{`location "../escape.bin" leaves the model's directory`}},
		{"nested escape", []string{"location", "sub/../../escape.bin", "length", "128"}, Options{}, []string{"leaves the model's directory"}},
		{"absolute path", []string{"location", abs, "length", "128"}, Options{}, []string{"leaves the model's directory"}},
		{"directory", []string{"location", "sub", "length", "128"}, Options{}, []string{`"sub" is not a regular file`}},
		{"missing file", []string{"location", "nope.bin", "length", "128"}, Options{}, []string{"nope.bin"}},
		{"huge length", []string{"location", "external.bin", "offset", "0", "length", "1099511627776"}, Options{}, []string{"declares 1099511627776 bytes at offset 0", "holds 268 bytes"}},
		{"offset past the end", []string{"location", "external.bin", "offset", "4096", "length", "128"}, Options{}, []string{"offset 4096 is past the end"}},
		{"bad offset", []string{"location", "external.bin", "offset", "-1"}, Options{}, []string{`offset "-1"`, "expected a byte count"}},
		{"length not the dims", []string{"location", "external.bin", "offset", "0", "length", "64"}, Options{}, []string{"(128 bytes) but its external data length is 64"}},
		{"no location", []string{"offset", "0"}, Options{}, []string{"has no location"}},
		{"over the external budget", []string{"location", "external.bin", "length", "128"}, Options{MaxExternalBytes: 100}, []string{"over the limit of 100 bytes"}},
		{"symlink out", []string{"location", "link.bin", "length", "128"}, Options{}, []string{"link.bin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "symlink out" && !symlinkOK {
				t.Skip("no symbolic links here")
			}
			m := readPB(t, "external.onnx")
			setExternal(m.Graph.Initializer[0], tc.kv...)
			opts := tc.opts
			opts.Dir = dir
			_, err := decodePB(t, m, opts)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `initializer "W1"`)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}

	// The same model with the copied data loads.
	m := readPB(t, "external.onnx")
	b, err := proto.Marshal(m)
	require.NoError(t, err)
	path := filepath.Join(dir, "m.onnx")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	got, err := Load(path)
	require.NoError(t, err)
	assert.Len(t, got.Graph.Initializers, 4)
}

func TestTruncatedAndShort(t *testing.T) {
	b, err := os.ReadFile("testdata/mlp.onnx")
	require.NoError(t, err)
	for _, n := range []int{1, 10, len(b) / 2, len(b) - 1} {
		_, err := Decode(bytes.NewReader(b[:n]), int64(n), Options{})
		assert.Error(t, err, "first %d bytes", n)
	}
	// A reader that ends before the declared size.
	_, err = Decode(bytes.NewReader(b), int64(len(b))+10, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unexpected EOF")
	_, err = Decode(bytes.NewReader(b), -1, Options{})
	assert.ErrorContains(t, err, "negative model size")

	_, err = Load("testdata")
	assert.ErrorContains(t, err, "not a regular file")
	_, err = Load("testdata/nope.onnx")
	assert.Error(t, err)
}

// TestDeclaredSizeIsNotTrusted: a size far beyond the bytes that arrive
// costs memory in proportion to the bytes, not the size.
func TestDeclaredSizeIsNotTrusted(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Decode(bytes.NewReader(make([]byte, 100)), 1<<30, Options{})
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20))
}

func TestFileErrors(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"opset9.onnx", `opset import of domain "ai.onnx" version 9 is not supported; expected ai.onnx versions 11 to 21`},
	} {
		_, err := Load(filepath.Join("testdata", tc.file))
		require.Error(t, err, tc.file)
		assert.Contains(t, err.Error(), tc.want)
		assert.Contains(t, err.Error(), tc.file)
	}
}

func TestSubgraphsAndDomains(t *testing.T) {
	m := readPB(t, "mlp.onnx")
	then := &pb.GraphProto{Name: proto.String("then"), Node: []*pb.NodeProto{{OpType: proto.String("Relu"), Input: []string{"y"}, Output: []string{"t"}}}}
	els := &pb.GraphProto{Name: proto.String("else"), Node: []*pb.NodeProto{{OpType: proto.String("Neg"), Input: []string{"y"}, Output: []string{"e"}}}}
	m.Graph.Node = append(m.Graph.Node,
		&pb.NodeProto{Name: proto.String("if"), OpType: proto.String("If"), Input: []string{"c"}, Output: []string{"z"}, Attribute: []*pb.AttributeProto{
			{Name: proto.String("then_branch"), Type: pb.AttributeProto_GRAPH.Enum(), G: then},
			{Name: proto.String("else_branch"), Type: pb.AttributeProto_GRAPH.Enum(), G: els}}},
		&pb.NodeProto{Name: proto.String("fused"), OpType: proto.String("FusedGemm"), Domain: proto.String("com.microsoft")})
	m.OpsetImport = append(m.OpsetImport, &pb.OperatorSetIdProto{Domain: proto.String("com.microsoft"), Version: proto.Int64(1)})
	got, err := decodePB(t, m, Options{})
	require.NoError(t, err)
	s := Inspect(got)
	assert.Equal(t, map[string]int{"Gemm": 2, "Relu": 2, "If": 1, "Neg": 1, "com.microsoft.FusedGemm": 1}, s.OpCounts)
	assert.Equal(t, []string{"Gemm", "If", "Neg", "Relu", "com.microsoft.FusedGemm"}, s.Unsupported)
	assert.Equal(t, []Opset{{"", 17}, {"com.microsoft", 1}}, s.Opsets)
	assert.False(t, Supported("", "Gemm"))

	// A node of another domain is named with that domain's opset.
	m.Graph.Node[4].Attribute = []*pb.AttributeProto{{Name: proto.String("x"), Type: pb.AttributeProto_SPARSE_TENSOR.Enum()}}
	_, err = decodePB(t, m, Options{})
	assert.ErrorContains(t, err, `node 4 "fused" (com.microsoft.FusedGemm, opset 1): attribute "x" has type SPARSE_TENSOR`)
	m.Graph.Node[4].Attribute = nil

	// An error inside a subgraph names the node holding it.
	then.Initializer = []*pb.TensorProto{{Name: proto.String("b"), DataType: proto.Int32(int32(pb.TensorProto_UINT16)), Dims: []int64{1}, RawData: []byte{1, 0}}}
	_, err = decodePB(t, m, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `subgraph then_branch of node 3 "if": initializer "b" has element type UINT16`)
}

// BOOL tensors (one byte an element in raw_data, one int32 an element in
// int32_data) are held as int64 0 and 1, with Elem saying BOOL; their
// declared dims are checked against the bytes as for every type.
func TestBoolTensors(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    *pb.TensorProto
		want []int64
		err  string
	}{
		{"raw", &pb.TensorProto{Dims: []int64{2, 2}, RawData: []byte{1, 0, 7, 0}}, []int64{1, 0, 1, 0}, ""},
		{"int32_data", &pb.TensorProto{Dims: []int64{3}, Int32Data: []int32{0, 1, -2}}, []int64{0, 1, 1}, ""},
		{"raw too short", &pb.TensorProto{Dims: []int64{5}, RawData: []byte{1, 0}}, nil, "declares dims [5] (5 elements of 1 bytes, 5 bytes) but raw_data holds 2 bytes"},
		{"int32_data too short", &pb.TensorProto{Dims: []int64{1 << 40}, Int32Data: []int32{1}}, nil, "but its BOOL data holds 1 elements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, a, ok := decodeTensor(t, tc.t, pb.TensorProto_BOOL, tc.err)
			if !ok {
				return
			}
			assert.Equal(t, tc.want, in.Tensor.Int64s())
			assert.Equal(t, tc.want, a.Value.(*tensor.Tensor).Int64s())
		})
	}
}

// decodeTensor adds tp, of element type et, to mlp.onnx as an initializer
// and as a TENSOR attribute of its first node, decodes the model and
// returns the two as read, both checked to keep et (the model's own
// initializers keep FLOAT). With wantErr set it checks the decode fails
// with it instead, and returns false.
func decodeTensor(t *testing.T, tp *pb.TensorProto, et pb.TensorProto_DataType, wantErr string) (Initializer, Attr, bool) {
	t.Helper()
	m := readPB(t, "mlp.onnx")
	tp.Name = proto.String("added")
	tp.DataType = proto.Int32(int32(et))
	m.Graph.Initializer = append(m.Graph.Initializer, tp)
	m.Graph.Node[0].Attribute = append(m.Graph.Node[0].Attribute, &pb.AttributeProto{Name: proto.String("t"), Type: pb.AttributeProto_TENSOR.Enum(), T: tp})
	got, err := decodePB(t, m, Options{})
	if wantErr != "" {
		require.Error(t, err)
		assert.Contains(t, err.Error(), wantErr)
		return Initializer{}, Attr{}, false
	}
	require.NoError(t, err)
	in := got.Graph.Initializers[len(got.Graph.Initializers)-1]
	a := got.Graph.Nodes[0].Attrs[len(got.Graph.Nodes[0].Attrs)-1]
	assert.Equal(t, ElemType(et), in.Elem)
	assert.Equal(t, ElemType(et), a.Elem)
	assert.Equal(t, ElemType(pb.TensorProto_FLOAT), got.Graph.Initializers[0].Elem)
	return in, a, true
}

func TestScalarAndEmpty(t *testing.T) {
	m := readPB(t, "mlp.onnx")
	m.Graph.Initializer = append(m.Graph.Initializer,
		&pb.TensorProto{Name: proto.String("s"), DataType: proto.Int32(int32(pb.TensorProto_INT64)), Int64Data: []int64{42}},
		&pb.TensorProto{Name: proto.String("e"), DataType: proto.Int32(int32(pb.TensorProto_FLOAT)), Dims: []int64{0, 3}},
		&pb.TensorProto{Name: proto.String("d"), DataType: proto.Int32(int32(pb.TensorProto_DOUBLE)), Dims: []int64{2}, DoubleData: []float64{0.5, -2}})
	got, err := decodePB(t, m, Options{})
	require.NoError(t, err)
	s := got.Graph.Initializer("s")
	assert.Equal(t, 0, s.Rank())
	assert.Equal(t, []int64{42}, s.Int64s())
	assert.Equal(t, tensor.Shape{0, 3}, got.Graph.Initializer("e").Shape())
	assert.Equal(t, []float64{0.5, -2}, got.Graph.Initializer("d").Float64s())
}
