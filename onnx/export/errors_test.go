package export_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/onnx/export"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// What Export cannot write is an error naming the op (its registry name,
// position in the trace and input shapes) and what was expected.
func TestExportErrors(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 2, 3)
	ids := tensor.Zeros(tensor.Int64, 5)
	off := []int{0, 2, 5}
	ones := func(shape ...int) *tensor.Tensor {
		o := tensor.Zeros(tensor.Float32, shape...)
		o.Fill(1)
		return o
	}
	c23 := ones(2, 3)
	table := ones(4, 3)
	dense := func(f func(tape *graph.Tape, x *graph.Value) *graph.Value) func(*graph.Tape, []*tensor.Tensor) *graph.Value {
		return func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value { return f(tape, tape.Const(in[0])) }
	}
	words := func(f func(tape *graph.Tape, s graph.Seq) *graph.Value) func(*graph.Tape, []*tensor.Tensor) *graph.Value {
		return func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
			e := graph.Embedding(tape.Const(table), in[0], ops.NoPadding)
			return f(tape, graph.Seq{Values: e, Offsets: off})
		}
	}
	ragged := export.Options{Inputs: []export.Input{{Name: "w", Offsets: off}}}
	for _, tc := range []struct {
		name    string
		forward func(*graph.Tape, []*tensor.Tensor) *graph.Value
		in      *tensor.Tensor
		opts    export.Options
		want    []string
	}{
		{"op without an export", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value {
			return tape.Apply(ops.UnaryOp("rsqrt"), x)
		}), x, export.Options{}, []string{"onnx/export: op 0: rsqrt: inputs float32[2 3]", "has no ONNX export"}},
		{"an op after one without an export", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value {
			return graph.Relu(tape.Apply(ops.UnaryOp("rsqrt"), x))
		}), x, export.Options{}, []string{"onnx/export: op 0: rsqrt: inputs float32[2 3]", "has no ONNX export"}},
		{"constant spanning the batch", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value {
			return graph.Add(graph.Relu(x), tape.Const(c23))
		}), x, export.Options{}, []string{"op 1: add", "input 1, float32[2 3], a constant, spans dimension 0, the batch"}},
		{"reshape of the batch", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value {
			return graph.Reshape(x, 6)
		}), x, export.Options{}, []string{"op 0: reshape", "reshapes the batch dimension into [6]"}},
		{"layer norm over the batch", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value {
			return graph.LayerNorm(x, tape.Const(c23), tape.Const(c23), 2, 1e-5)
		}), x, export.Options{}, []string{"op 0: layer_norm", "normalises over 2 axes of a rank-2 input, the batch among them"}},
		{"an op without typed attributes", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value {
			return graph.Transpose(x, 1, 0)
		}), x, export.Options{}, []string{"op 0: transpose", "has no ONNX export"}},
		{"matmul of a batch by its transpose", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value {
			return graph.MatMul(x, x, false, true)
		}), x, export.Options{}, []string{"op 0: matmul", "operand b, a batch of rank 2, is a matrix whose rows are the batch"}},
		{"sum over the batch", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value {
			return graph.Sum(x)
		}), x, export.Options{}, []string{"op 0: sum", "reduces over axis 0, the batch"}},
		{"softmax over the batch", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value {
			return graph.Softmax(x, 0)
		}), x, export.Options{}, []string{"op 0: softmax", "normalises over axis 0, the batch"}},
		{"offsets that differ", words(func(tape *graph.Tape, s graph.Seq) *graph.Value {
			return graph.SequencePool(graph.Seq{Values: s.Values, Offsets: []int{0, 1, 5}}, ops.SequencePoolMax, 0)
		}), ids, ragged, []string{"op 1: sequence_pool", "offsets [0 1 5] differ from the ragged input's [0 2 5]"}},
		{"ragged rows without offsets", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value {
			return graph.SequencePool(graph.Seq{Values: x, Offsets: []int{0, 1, 2}}, ops.SequencePoolSum, 0)
		}), x, export.Options{}, []string{"op 0: sequence_pool", "input 0 is not the rows of a ragged input"}},
		{"cell states of a fused LSTM", words(func(tape *graph.Tape, s graph.Seq) *graph.Value {
			u, b := tape.Const(tensor.Zeros(tensor.Float32, 1, 4)), tape.Const(tensor.Zeros(tensor.Float32, 4))
			w := tape.Const(tensor.Zeros(tensor.Float32, 3, 4))
			hc := graph.Linear(s.Values, w, b) // the projection, then the raw op's [h, c] rows
			out := tape.Apply(ops.LSTMProjectedOp(ops.LSTMAttrs{Offsets: off}), hc, u, b)
			return graph.SequencePool(s.With(graph.Slice(out, 1, 1, 2)), ops.SequencePoolMax, 0)
		}), ids, ragged, []string{"op 3: slice", "slices [1, 2) of axis 1 of a fused LSTM's [h, c] rows"}},
		{"bad offsets", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value { return x }),
			ids, export.Options{Inputs: []export.Input{{Offsets: []int{0, 2, 4}}}}, []string{`input "input": offsets [0 2 4] do not split its 5 rows`}},
		{"too many input descriptions", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value { return x }),
			x, export.Options{Inputs: []export.Input{{}, {}}}, []string{"2 input descriptions for 1 example inputs"}},
		{"output that is a constant", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value { return tape.Const(c23) }),
			x, export.Options{}, []string{"the output is not computed by an op from the inputs"}},
		{"output named as an input", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value { return graph.Relu(x) }),
			x, export.Options{Output: "input"}, []string{`output name "input" is an input's too`}},
		{"failing forward", dense(func(tape *graph.Tape, x *graph.Value) *graph.Value { return graph.Reshape(x, 7) }),
			x, export.Options{}, []string{"the forward pass failed", "reshape"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := export.Marshal(tc.forward, []*tensor.Tensor{tc.in}, tc.opts)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// fakeSoftmax is an op named softmax without typed attributes (no Attrs
// method): its translation cannot read an axis.
type fakeSoftmax struct{}

func (fakeSoftmax) Name() string { return "softmax" }

func (fakeSoftmax) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) { return in[0].Clone(), nil }

func (fakeSoftmax) Backward([]*tensor.Tensor, *tensor.Tensor, *tensor.Tensor, []bool) ([]*tensor.Tensor, error) {
	return nil, nil
}

// An op whose form the translation does not expect is an error naming
// it, not a panic out of Export.
func TestExportDoesNotPanic(t *testing.T) {
	x := tensor.Zeros(tensor.Float32, 2, 3)
	_, err := export.Marshal(func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
		return tape.Apply(fakeSoftmax{}, tape.Const(in[0]))
	}, []*tensor.Tensor{x}, export.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "op 0: softmax: inputs float32[2 3]: cannot be translated")
}
