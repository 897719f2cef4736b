package run

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/tensor"
)

// graphOf builds a one-graph model of opset from nodes; inputs are given
// as name → (element type, dims; -1 symbolic) and inits as constants.
func graphOf(opset int64, inputs []onnx.Value, inits map[string]*tensor.Tensor, outputs []string, nodes ...onnx.Node) *onnx.Model {
	g := &onnx.Graph{Name: "test", Inputs: inputs}
	for name, t := range inits {
		g.Initializers = append(g.Initializers, onnx.Initializer{Name: name, Tensor: t})
	}
	for _, o := range outputs {
		g.Outputs = append(g.Outputs, onnx.Value{Name: o})
	}
	for i := range nodes {
		nodes[i].Index = i
	}
	g.Nodes = nodes
	return &onnx.Model{Opset: opset, Opsets: []onnx.Opset{{Version: opset}}, Graph: g}
}

func input(name string, elem onnx.ElemType, dims ...int64) onnx.Value {
	v := onnx.Value{Name: name, Elem: elem, Shape: []onnx.Dim{}}
	for _, d := range dims {
		if d < 0 {
			v.Shape = append(v.Shape, onnx.Dim{Size: -1, Param: "batch"})
		} else {
			v.Shape = append(v.Shape, onnx.Dim{Size: d})
		}
	}
	return v
}

func nodeOf(name, op string, in, out []string, attrs ...onnx.Attr) onnx.Node {
	return onnx.Node{Name: name, OpType: op, Inputs: in, Outputs: out, Attrs: attrs}
}

func ints(v ...int64) *tensor.Tensor { return tensor.MustFromSlice(v, len(v)) }

// Every compile error names the node (index and name), its op type and
// opset, and says what was expected.
func TestCompileErrors(t *testing.T) {
	x23 := input("x", elemFloat, 2, 3)
	for _, tc := range []struct {
		name  string
		model *onnx.Model
		want  string
	}{
		{"unknown op", graphOf(17, []onnx.Value{x23}, nil, []string{"y"},
			nodeOf("frob", "Frobnicate", []string{"x"}, []string{"y"})),
			`node 0 "frob" (Frobnicate, opset 17): op type Frobnicate is not supported; expected one of the ops the importer runs`},
		{"vendor domain", graphOf(17, []onnx.Value{x23}, nil, []string{"y"},
			onnx.Node{Name: "fg", OpType: "FusedGemm", Domain: "com.microsoft", Inputs: []string{"x"}, Outputs: []string{"y"}}),
			`node 0 "fg" (com.microsoft.FusedGemm, opset 0): op type com.microsoft.FusedGemm is not supported`},
		{"op newer than the opset", graphOf(16, []onnx.Value{x23}, map[string]*tensor.Tensor{"g": tensor.Zeros(tensor.Float32, 3)}, []string{"y"},
			nodeOf("ln", "LayerNormalization", []string{"x", "g"}, []string{"y"})),
			`node 0 "ln" (LayerNormalization, opset 16): op LayerNormalization is supported from opset 17; expected a model importing opset 17 or later`},
		{"unknown attribute", graphOf(17, []onnx.Value{x23}, nil, []string{"y"},
			nodeOf("r", "Relu", []string{"x"}, []string{"y"}, onnx.Attr{Name: "alpha", Value: float32(1)})),
			`node 0 "r" (Relu, opset 17): attribute "alpha" is not supported; expected no attributes`},
		{"attribute of the wrong type", graphOf(17, []onnx.Value{x23}, nil, []string{"y"},
			nodeOf("sm", "Softmax", []string{"x"}, []string{"y"}, onnx.Attr{Name: "axis", Value: []int64{1}})),
			`node 0 "sm" (Softmax, opset 17): attribute "axis" is INTS; expected INT`},
		{"unsupported attribute value", graphOf(17, []onnx.Value{input("x", elemFloat, 1, 1, 4, 4)}, map[string]*tensor.Tensor{"w": tensor.Zeros(tensor.Float32, 1, 1, 3, 3)}, []string{"y"},
			nodeOf("conv", "Conv", []string{"x", "w"}, []string{"y"}, onnx.Attr{Name: "auto_pad", Value: "SAME_LOWER"})),
			`node 0 "conv" (Conv, opset 17): auto_pad "SAME_LOWER" is not supported; expected NOTSET, VALID or SAME_UPPER`},
		{"axis out of range", graphOf(17, []onnx.Value{x23}, nil, []string{"y"},
			nodeOf("sm", "Softmax", []string{"x"}, []string{"y"}, onnx.Attr{Name: "axis", Value: int64(2)})),
			`node 0 "sm" (Softmax, opset 17): axis 2 is out of range for rank 2; expected -2 to 1`},
		{"shapes that do not broadcast", graphOf(17, []onnx.Value{x23, input("b", elemFloat, 4)}, nil, []string{"y"},
			nodeOf("add", "Add", []string{"x", "b"}, []string{"y"})),
			`node 0 "add" (Add, opset 17): input shapes [[2 3] [4]] do not broadcast (dims 3 and 4 of axis 1 do not broadcast); expected equal dims or 1 along each axis`},
		{"matmul inner dims", graphOf(17, []onnx.Value{x23, input("b", elemFloat, 4, 5)}, nil, []string{"y"},
			nodeOf("mm", "MatMul", []string{"x", "b"}, []string{"y"})),
			`node 0 "mm" (MatMul, opset 17): inputs [2 3] and [4 5] have inner dims 3 and 4; expected them equal`},
		{"conv channels", graphOf(13, []onnx.Value{input("x", elemFloat, -1, 3, 8, 8)}, map[string]*tensor.Tensor{"w": tensor.Zeros(tensor.Float32, 4, 2, 3, 3)}, []string{"y"},
			nodeOf("conv", "Conv", []string{"x", "w"}, []string{"y"})),
			`node 0 "conv" (Conv, opset 13): X has 3 channels but W [4 2 3 3] with group 1 takes 2; expected C = W's dim 1 × group`},
		{"reshape size", graphOf(13, []onnx.Value{x23}, map[string]*tensor.Tensor{"s": ints(4, 2)}, []string{"y"},
			nodeOf("rs", "Reshape", []string{"x", "s"}, []string{"y"})),
			`node 0 "rs" (Reshape, opset 13): input [2 3] has 6 elements but target [4 2] has 8`},
		{"concat dims", graphOf(13, []onnx.Value{x23, input("b", elemFloat, 3, 3)}, nil, []string{"y"},
			nodeOf("cat", "Concat", []string{"x", "b"}, []string{"y"}, onnx.Attr{Name: "axis", Value: int64(1)})),
			`node 0 "cat" (Concat, opset 13): input 1 "b" has shape [3 3] but input 0 has [2 3]; expected equal dims off axis 1`},
		{"dtype mismatch", graphOf(13, []onnx.Value{x23, input("i", elemInt64, 2, 3)}, nil, []string{"y"},
			nodeOf("add", "Add", []string{"x", "i"}, []string{"y"})),
			`node 0 "add" (Add, opset 13): input 0 "x" is FLOAT but input 1 "i" is INT64; expected one element type`},
		{"float indices", graphOf(13, []onnx.Value{x23, input("i", elemFloat, 2)}, nil, []string{"y"},
			nodeOf("g", "Gather", []string{"x", "i"}, []string{"y"})),
			`node 0 "g" (Gather, opset 13): input 1 "i" (indices) is FLOAT; expected INT32 or INT64`},
		{"float condition", graphOf(13, []onnx.Value{x23}, nil, []string{"y"},
			nodeOf("w", "Where", []string{"x", "x", "x"}, []string{"y"})),
			`node 0 "w" (Where, opset 13): input 0 "x" (condition) is FLOAT; expected BOOL`},
		{"int relu", graphOf(13, []onnx.Value{input("i", elemInt64, 2)}, nil, []string{"y"},
			nodeOf("r", "Relu", []string{"i"}, []string{"y"})),
			`node 0 "r" (Relu, opset 13): input 0 "i" is INT64; expected FLOAT or DOUBLE`},
		{"run-time axes", graphOf(13, []onnx.Value{x23, input("a", elemInt64, 1)}, nil, []string{"y"},
			nodeOf("u", "Unsqueeze", []string{"x", "a"}, []string{"y"})),
			`node 0 "u" (Unsqueeze, opset 13): input 1 "a" (axes) is computed at run time; expected a constant`},
		{"missing input", graphOf(13, []onnx.Value{x23}, nil, []string{"y"},
			nodeOf("r", "Relu", []string{"nope"}, []string{"y"})),
			`node 0 "r" (Relu, opset 13): input 0 "nope" is produced by no earlier node, graph input or initializer; expected the nodes in topological order`},
		{"arity", graphOf(13, []onnx.Value{x23}, nil, []string{"y"},
			nodeOf("r", "Relu", []string{"x", "x"}, []string{"y"})),
			`node 0 "r" (Relu, opset 13): has 2 inputs; expected 1`},
		{"non-default activations", graphOf(14, []onnx.Value{input("x", elemFloat, 2, 1, 2)}, map[string]*tensor.Tensor{"W": tensor.Zeros(tensor.Float32, 1, 3, 2), "R": tensor.Zeros(tensor.Float32, 1, 3, 1)}, []string{"y"},
			nodeOf("gru", "GRU", []string{"x", "W", "R"}, []string{"y"}, onnx.Attr{Name: "hidden_size", Value: int64(1)}, onnx.Attr{Name: "activations", Value: []string{"Relu", "Tanh"}})),
			`node 0 "gru" (GRU, opset 14): activations [Relu Tanh] are not supported; expected the defaults [Sigmoid Tanh]`},
		{"scatter reduction mul", graphOf(18, []onnx.Value{x23, input("i", elemInt64, 1, 1), input("u", elemFloat, 1, 3)}, nil, []string{"y"},
			nodeOf("sc", "ScatterND", []string{"x", "i", "u"}, []string{"y"}, onnx.Attr{Name: "reduction", Value: "mul"})),
			`node 0 "sc" (ScatterND, opset 18): reduction "mul" is not supported; expected "none" or "add"`},
		{"scatter reduction min", graphOf(18, []onnx.Value{x23, input("i", elemInt64, 1, 1), input("u", elemFloat, 1, 3)}, nil, []string{"y"},
			nodeOf("sc", "ScatterND", []string{"x", "i", "u"}, []string{"y"}, onnx.Attr{Name: "reduction", Value: "min"})),
			`node 0 "sc" (ScatterND, opset 18): reduction "min" is not supported; expected "none" or "add"`},
		{"scatter reduction max", graphOf(18, []onnx.Value{x23, input("i", elemInt64, 1, 1), input("u", elemFloat, 1, 3)}, nil, []string{"y"},
			nodeOf("sc", "ScatterND", []string{"x", "i", "u"}, []string{"y"}, onnx.Attr{Name: "reduction", Value: "max"})),
			`node 0 "sc" (ScatterND, opset 18): reduction "max" is not supported; expected "none" or "add"`},
		{"scatter updates shape", graphOf(16, []onnx.Value{x23, input("i", elemInt64, 1, 1), input("u", elemFloat, 1, 2)}, nil, []string{"y"},
			nodeOf("sc", "ScatterND", []string{"x", "i", "u"}, []string{"y"})),
			`node 0 "sc" (ScatterND, opset 16): updates [1 2] for data [2 3] and indices [1 1]; expected [1 3]`},
		{"gather_elements rank", graphOf(13, []onnx.Value{x23, input("i", elemInt64, 2)}, nil, []string{"y"},
			nodeOf("ge", "GatherElements", []string{"x", "i"}, []string{"y"})),
			`node 0 "ge" (GatherElements, opset 13): indices [2] and data [2 3] have ranks 1 and 2; expected them equal`},
		{"group_norm channels", graphOf(21, []onnx.Value{input("x", elemFloat, 2, 4, 3), input("s", elemFloat, 4)}, nil, []string{"y"},
			nodeOf("gn", "GroupNormalization", []string{"x", "s", "s"}, []string{"y"}, onnx.Attr{Name: "num_groups", Value: int64(3)})),
			`node 0 "gn" (GroupNormalization, opset 21): input [2 4 3] has 4 channels; expected a multiple of num_groups 3`},
		{"group_norm 18 per-group scale", graphOf(18, []onnx.Value{input("x", elemFloat, 2, 4, 3), input("s", elemFloat, 4)}, nil, []string{"y"},
			nodeOf("gn", "GroupNormalization", []string{"x", "s", "s"}, []string{"y"}, onnx.Attr{Name: "num_groups", Value: int64(2)})),
			`node 0 "gn" (GroupNormalization, opset 18): input 1 "s" has shape [4]; expected [2], one value per group (opset 18)`},
		{"instance_norm rank", graphOf(17, []onnx.Value{x23, input("s", elemFloat, 3)}, nil, []string{"y"},
			nodeOf("in", "InstanceNormalization", []string{"x", "s", "s"}, []string{"y"})),
			`node 0 "in" (InstanceNormalization, opset 17): input has shape [2 3]; expected [N, C, D1, ...] of rank 3 or more`},
		{"cumsum axis rank", graphOf(14, []onnx.Value{x23}, map[string]*tensor.Tensor{"a": ints(0, 1)}, []string{"y"},
			nodeOf("cs", "CumSum", []string{"x", "a"}, []string{"y"})),
			`node 0 "cs" (CumSum, opset 14): input 1 "a" (axis) has shape [2]; expected a scalar`},
		{"cumsum axis range", graphOf(14, []onnx.Value{x23}, map[string]*tensor.Tensor{"a": ints(2)}, []string{"y"},
			nodeOf("cs", "CumSum", []string{"x", "a"}, []string{"y"})),
			`node 0 "cs" (CumSum, opset 14): axis 2 is out of range for rank 2; expected -2 to 1`},
		{"gather_nd batch_dims", graphOf(13, []onnx.Value{x23, input("i", elemInt64, 2, 1)}, nil, []string{"y"},
			nodeOf("gn", "GatherND", []string{"x", "i"}, []string{"y"}, onnx.Attr{Name: "batch_dims", Value: int64(2)})),
			`node 0 "gn" (GatherND, opset 13): batch_dims 2 for data [2 3] and indices [2 1]; expected 0 to 1`},
		{"gather_nd coordinates", graphOf(13, []onnx.Value{x23, input("i", elemInt64, 2, 3)}, nil, []string{"y"},
			nodeOf("gn", "GatherND", []string{"x", "i"}, []string{"y"})),
			`node 0 "gn" (GatherND, opset 13): indices [2 3] has last dim 3 for data [2 3] with batch_dims 0; expected 1 to 2`},
		{"scatter reduction before 16", graphOf(13, []onnx.Value{x23, input("i", elemInt64, 1, 1), input("u", elemFloat, 1, 3)}, nil, []string{"y"},
			nodeOf("sc", "ScatterND", []string{"x", "i", "u"}, []string{"y"}, onnx.Attr{Name: "reduction", Value: "add"})),
			`node 0 "sc" (ScatterND, opset 13): attribute "reduction" is not supported; expected no attributes`},
		{"graph output nobody makes", graphOf(13, []onnx.Value{x23}, nil, []string{"z"},
			nodeOf("r", "Relu", []string{"x"}, []string{"y"})),
			`graph output "z" is produced by no node, input or initializer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.model)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// Errors found at run time (a symbolic dim's size disagreeing with a
// weight) name the node as compile errors do: for a MatMul by a constant
// (the packed linear path) and by a run-time matrix.
func TestRunErrorNamesNode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		inputs []onnx.Value
		inits  map[string]*tensor.Tensor
		feed   map[string]*tensor.Tensor
		want   string
	}{
		{"constant weights", []onnx.Value{input("x", elemFloat, -1, -1)}, map[string]*tensor.Tensor{"w": tensor.Zeros(tensor.Float32, 3, 2)},
			map[string]*tensor.Tensor{"x": tensor.Zeros(tensor.Float32, 2, 4)},
			`node 0 "mm" (MatMul, opset 13): linear: inputs float32[2 4], float32[3 2]: want x [..., in] and w [in, out] with matching in`},
		{"run-time matrix", []onnx.Value{input("x", elemFloat, -1, -1), input("w", elemFloat, -1, 2)}, nil,
			map[string]*tensor.Tensor{"x": tensor.Zeros(tensor.Float32, 2, 4), "w": tensor.Zeros(tensor.Float32, 3, 2)},
			`node 0 "mm" (MatMul, opset 13): inputs [2 4] and [3 2] have inner dims 4 and 3; expected them equal`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Compile(graphOf(13, tc.inputs, tc.inits, []string{"y"}, nodeOf("mm", "MatMul", []string{"x", "w"}, []string{"y"})))
			require.NoError(t, err)
			_, err = m.Run(tc.feed)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			var ne *NodeError
			require.ErrorAs(t, err, &ne)
			assert.Equal(t, "MatMul", ne.OpType)
			assert.Equal(t, int64(13), ne.Opset)
		})
	}
}
