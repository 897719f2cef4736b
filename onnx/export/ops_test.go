package export_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/onnx/export"
	"github.com/plumbml/plumb/onnx/run"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// padRows returns the rows of x [total, ...] split by offsets as
// [batch, longest, ...], each sequence from step 0 and fill after its end,
// and the lengths.
func padRows(x *tensor.Tensor, offsets []int, fill float64) (*tensor.Tensor, *tensor.Tensor) {
	b := len(offsets) - 1
	longest := 1
	for q := range b {
		longest = max(longest, offsets[q+1]-offsets[q])
	}
	row := x.Size() / max(x.Dim(0), 1)
	if x.Dim(0) == 0 {
		row = tensor.Shape(x.Shape()[1:]).Size()
	}
	p := tensor.Zeros(x.DType(), append([]int{b, longest}, x.Shape()[1:]...)...)
	p.Fill(fill)
	l := tensor.Zeros(tensor.Int64, b)
	for q := range b {
		l.Int64s()[q] = int64(offsets[q+1] - offsets[q])
		for i := range (offsets[q+1] - offsets[q]) * row {
			p.SetAt(q*longest*row+i, x.At(offsets[q]*row+i))
		}
	}
	return p, l
}

func randT(t *testing.T, rng *rand.Rand, shape ...int) *tensor.Tensor {
	x, err := tensor.RandNormal(rng, tensor.Float32, 0, 0.5, shape...)
	require.NoError(t, err)
	return x
}

// opCase is a small forward pass over a dense batch of rows of shape row,
// or over a ragged batch of such steps (ids: word ids below ids instead).
type opCase struct {
	name   string
	ragged bool
	ids    int
	row    []int
	empty  bool // sequences may be empty
	// raggedOut: the output is the rows of the ragged batch, which the
	// ONNX model gives padded.
	raggedOut bool
	// build makes the weights once and returns the forward pass: x is the
	// dense input, or s the ragged one.
	build func(t *testing.T, rng *rand.Rand) func(tape *graph.Tape, x *graph.Value, s graph.Seq) *graph.Value
}

// example returns the case's forward pass at batch n, its Plumb inputs
// and the ONNX inputs.
func (oc opCase) example(t *testing.T, f func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value, n int, seed uint64) (func(*graph.Tape, []*tensor.Tensor) *graph.Value, []*tensor.Tensor, export.Options, map[string]*tensor.Tensor) {
	rng := tensor.NewRNG(seed)
	if !oc.ragged {
		x := randT(t, rng, append([]int{n}, oc.row...)...)
		return func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
				return f(tape, tape.Const(in[0]), graph.Seq{})
			},
			[]*tensor.Tensor{x}, export.Options{}, map[string]*tensor.Tensor{"input": x}
	}
	off := []int{0}
	for q := range n {
		l := 1 + rng.IntN(5)
		if oc.empty && q%3 == 1 {
			l = 0
		}
		off = append(off, off[q]+l)
	}
	var x *tensor.Tensor
	if oc.ids > 0 {
		x = tensor.Zeros(tensor.Int64, off[n])
		for i := range x.Int64s() {
			x.Int64s()[i] = int64(rng.IntN(oc.ids))
		}
	} else {
		x = randT(t, rng, append([]int{off[n]}, oc.row...)...)
	}
	fill := 7.0 // past each end: anything, the export must mask it
	if oc.ids > 0 {
		fill = 1
	}
	p, l := padRows(x, off, fill)
	return func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
			return f(tape, nil, tape.ConstSeq(&tensor.Ragged{Values: in[0], Offsets: off}))
		}, []*tensor.Tensor{x}, export.Options{Inputs: []export.Input{{Offsets: off}}},
		map[string]*tensor.Tensor{"input": p, "input_lengths": l}
}

// roundTrip exports oc traced at batch 3 and checks onnx/run's outputs at
// batch 1, 3 and 6 against Plumb's within 1e-5.
func roundTrip(t *testing.T, oc opCase) {
	f := oc.build(t, tensor.NewRNG(5))
	fw, ex, opts, _ := oc.example(t, f, 3, 1)
	var buf bytes.Buffer
	require.NoError(t, export.Export(&buf, fw, ex, opts))
	m, err := onnx.Decode(bytes.NewReader(buf.Bytes()), int64(buf.Len()), onnx.Options{})
	require.NoError(t, err)
	c, err := run.Compile(m)
	require.NoError(t, err)
	var cases []map[string]any
	for _, n := range []int{1, 3, 6} {
		fw, ex, opts, feeds := oc.example(t, f, n, uint64(20+n))
		want, err := fw(graph.NewEvalTape(), ex).Tensor()
		require.NoError(t, err)
		out, err := c.Run(feeds)
		require.NoError(t, err)
		if oc.raggedOut { // rows [total, ...] against padded [batch, seq, ...], zeros past each end
			want, _ = padRows(want, opts.Inputs[0].Offsets, 0)
		}
		assert.LessOrEqual(t, maxAbsDiff(t, want, out["output"]), 1e-5, "batch %d", n)
		cases = append(cases, map[string]any{"inputs": tensorsJSON(feeds), "want": tensorJSON(want)})
	}
	saveForORT(t, "op_"+strings.NewReplacer(" ", "_", ",", "", "-", "m").Replace(oc.name), buf.Bytes(), cases)
}

// Each op Export writes, alone or in a small net, round-trips through
// onnx.Decode and onnx/run at batch sizes other than the traced one.
func TestOpsRoundTrip(t *testing.T) {
	pools := []ops.SequencePoolType{ops.SequencePoolSum, ops.SequencePoolAverage, ops.SequencePoolSqrt, ops.SequencePoolMax, ops.SequencePoolFirst, ops.SequencePoolLast}
	var cases []opCase
	for _, p := range pools {
		cases = append(cases, opCase{name: "sequence_pool " + string(p), ragged: true, row: []int{4}, empty: true,
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				return func(_ *graph.Tape, _ *graph.Value, s graph.Seq) *graph.Value { return graph.SequencePool(s, p, 0.5) }
			}})
	}
	cases = append(cases,
		opCase{name: "sequence_conv then average", ragged: true, row: []int{4}, empty: true,
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				w := randT(t, rng, 3*4, 5)
				return func(tape *graph.Tape, _ *graph.Value, s graph.Seq) *graph.Value {
					return graph.SequencePool(graph.SequenceConv(s, tape.Const(w), nil, -1, 3), ops.SequencePoolAverage, 0)
				}
			}},
		opCase{name: "sequence_conv_pool_max start -2", ragged: true, row: []int{4}, empty: true,
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				w := randT(t, rng, 4*4, 3)
				return func(tape *graph.Tape, _ *graph.Value, s graph.Seq) *graph.Value {
					return graph.SequenceConvPoolMax(s, tape.Const(w), nil, -2, 4)
				}
			}},
		opCase{name: "embedding with padding, linear, softmax rows, sum", ragged: true, ids: 9,
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				table, w, b := randT(t, rng, 9, 4), randT(t, rng, 4, 3), randT(t, rng, 3)
				return func(tape *graph.Tape, _ *graph.Value, s graph.Seq) *graph.Value {
					ids, err := s.Values.Tensor()
					require.NoError(t, err)
					e := s.With(graph.Embedding(tape.Const(table), ids, 2))
					h := s.With(graph.Softmax(graph.Linear(e.Values, tape.Const(w), tape.Const(b)), -1))
					return graph.SequencePool(h, ops.SequencePoolSum, 0)
				}
			}},
		opCase{name: "lstm with peepholes, reverse, final state and pooled h", ragged: true, row: []int{3}, empty: true,
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				const h = 4
				w, u, b, p := randT(t, rng, 3, 4*h), randT(t, rng, h, 4*h), randT(t, rng, 4*h), randT(t, rng, 3*h)
				return func(tape *graph.Tape, _ *graph.Value, s graph.Seq) *graph.Value {
					hs, final := graph.LSTM(s, graph.LSTMWeights{W: tape.Const(w), U: tape.Const(u), B: tape.Const(b), Peephole: tape.Const(p)}, nil, true)
					return graph.Concat(1, final.H, final.C, graph.SequencePool(hs, ops.SequencePoolMax, 0))
				}
			}},
		opCase{name: "gru both reset forms, both directions, final states", ragged: true, row: []int{3}, empty: true,
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				const h = 4
				w1, u1, b1 := randT(t, rng, 3, 3*h), randT(t, rng, h, 3*h), randT(t, rng, 2, 3*h)
				w2, u2, b2 := randT(t, rng, 3, 3*h), randT(t, rng, h, 3*h), randT(t, rng, 3*h)
				return func(tape *graph.Tape, _ *graph.Value, s graph.Seq) *graph.Value {
					_, f1 := graph.GRU(s, graph.GRUWeights{W: tape.Const(w1), U: tape.Const(u1), B: tape.Const(b1), ResetAfter: true}, nil, true)
					hs, f2 := graph.GRU(s, graph.GRUWeights{W: tape.Const(w2), U: tape.Const(u2), B: tape.Const(b2)}, nil, false)
					return graph.Concat(1, f1, f2, graph.SequencePool(hs, ops.SequencePoolAverage, 0))
				}
			}},
		opCase{name: "a branch without export that the output does not use", row: []int{3},
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				g, b := randT(t, rng, 3), randT(t, rng, 3)
				return func(tape *graph.Tape, x *graph.Value, _ graph.Seq) *graph.Value {
					graph.Relu(tape.Apply(ops.UnaryOp("rsqrt"), graph.Add(x, tape.Const(g)))) // computed, not returned
					_ = b
					return graph.Tanh(x)
				}
			}},
		opCase{name: "ragged output", ragged: true, row: []int{3}, empty: true, raggedOut: true,
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				w := randT(t, rng, 3, 2)
				return func(tape *graph.Tape, _ *graph.Value, s graph.Seq) *graph.Value {
					return graph.Tanh(graph.Linear(s.Values, tape.Const(w), nil))
				}
			}},
		opCase{name: "matmul and layer norm", row: []int{3, 4},
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				w, g, b := randT(t, rng, 5, 4), randT(t, rng, 4), randT(t, rng, 4)
				w3 := randT(t, rng, 1, 3, 3)
				return func(tape *graph.Tape, x *graph.Value, _ graph.Seq) *graph.Value {
					n := graph.LayerNorm(x, tape.Const(g), tape.Const(b), 1, 1e-3)
					y := graph.MatMul(n, tape.Const(w), false, true) // [n, 3, 5]
					s := graph.MatMul(x, x, false, true)             // [n, 3, 3]
					s = graph.MatMul(tape.Const(w3), s, false, true) // [n, 3, 3]
					return graph.Concat(2, y, s, graph.MatMul(x, x, false, true))
				}
			}},
		opCase{name: "layer norm and matmul on ragged rows", ragged: true, row: []int{4},
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				w, g, b := randT(t, rng, 4, 2), randT(t, rng, 4), randT(t, rng, 4)
				return func(tape *graph.Tape, _ *graph.Value, s graph.Seq) *graph.Value {
					n := graph.LayerNorm(s.Values, tape.Const(g), tape.Const(b), 1, 1e-5)
					return graph.SequencePool(s.With(graph.MatMul(n, tape.Const(w), false, false)), ops.SequencePoolSum, 0)
				}
			}},
		opCase{name: "activations written as formulas, selu, hard_swish, hard_sigmoid", row: []int{5},
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				return func(tape *graph.Tape, x *graph.Value, _ graph.Seq) *graph.Value {
					x = graph.Mul(x, tape.Const(tensor.Scalar(float32(4)))) // into the nonlinear ranges
					return graph.Concat(1, graph.Gelu(x), graph.GeluTanh(x), graph.Swish(x), graph.Mish(x), graph.Selu(x),
						tape.Apply(ops.UnaryOp("hard_swish"), x), graph.HardSigmoid(x, 0.3, 0.4))
				}
			}},
		opCase{name: "lstm and gru cells", row: []int{3},
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				const h = 4
				wh, wc := randT(t, rng, 3, h), randT(t, rng, 3, h)
				lw, lu, lb, lp := randT(t, rng, 3, 4*h), randT(t, rng, h, 4*h), randT(t, rng, 4*h), randT(t, rng, 3*h)
				g1w, g1u, g1b := randT(t, rng, 3, 3*h), randT(t, rng, h, 3*h), randT(t, rng, 2, 3*h)
				g2w, g2u, g2b := randT(t, rng, 3, 3*h), randT(t, rng, h, 3*h), randT(t, rng, 3*h)
				return func(tape *graph.Tape, x *graph.Value, _ graph.Seq) *graph.Value {
					k := tape.Const
					h0 := graph.Tanh(graph.Linear(x, k(wh), nil))
					c0 := graph.Linear(x, k(wc), nil)
					s := graph.LSTMCell(x, graph.LSTMState{H: h0, C: c0}, graph.LSTMWeights{W: k(lw), U: k(lu), B: k(lb), Peephole: k(lp)})
					g1 := graph.GRUCell(x, h0, graph.GRUWeights{W: k(g1w), U: k(g1u), B: k(g1b), ResetAfter: true})
					g2 := graph.GRUCell(x, h0, graph.GRUWeights{W: k(g2w), U: k(g2u), B: k(g2b)})
					return graph.Concat(1, s.H, s.C, g1, g2)
				}
			}},
		opCase{name: "reductions", row: []int{3, 4},
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				return func(tape *graph.Tape, x *graph.Value, _ graph.Seq) *graph.Value {
					m := graph.Mean(tape.Apply(ops.ReduceOp("logsumexp", []int{2}, true), x), 2)
					return graph.Concat(1, graph.Sum(x, 2), m, graph.Reshape(graph.Mean(x, 1, 2), -1, 1), tape.Apply(ops.ReduceOp("max", []int{-1}, false), x),
						tape.Apply(ops.ReduceOp("min", []int{2}, false), x))
				}
			}},
		opCase{name: "reduction within the rows of a ragged batch", ragged: true, row: []int{2, 3},
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				return func(tape *graph.Tape, _ *graph.Value, s graph.Seq) *graph.Value {
					return graph.SequencePool(s.With(graph.Sum(s.Values, 2)), ops.SequencePoolMax, 0)
				}
			}},
		opCase{name: "image ops", row: []int{3, 9, 9},
			build: func(t *testing.T, rng *rand.Rand) func(*graph.Tape, *graph.Value, graph.Seq) *graph.Value {
				w, b := randT(t, rng, 4, 3, 3, 3), randT(t, rng, 4)
				w2 := randT(t, rng, 4, 2, 1, 1)
				lw := randT(t, rng, 4, 2)
				return func(tape *graph.Tape, x *graph.Value, _ graph.Seq) *graph.Value {
					y := graph.Conv2D(x, tape.Const(w), tape.Const(b), ops.Conv2DAttrs{Stride: [2]int{2, 2}, Padding: ops.PadSame})
					y = graph.LeakyRelu(y, 0.1)
					y = graph.AvgPool2D(y, ops.Pool2DAttrs{Kernel: [2]int{3, 3}, Stride: [2]int{2, 2}, Pad: [4]int{1, 1, 0, 1}, CeilMode: true})
					y = graph.Elu(y, 0.7)
					y = graph.Conv2D(y, tape.Const(w2), nil, ops.Conv2DAttrs{Groups: 2})
					y = graph.MaxPool2D(graph.Clip(y, -0.3, 0.4), ops.Pool2DAttrs{Kernel: [2]int{2, 2}, Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}})
					y = graph.GlobalAvgPool2D(graph.Square(graph.Sigmoid(y)))
					return graph.Softmax(graph.Exp(graph.Linear(y, tape.Const(lw), nil)), 1)
				}
			}},
	)
	for _, oc := range cases {
		t.Run(oc.name, func(t *testing.T) { roundTrip(t, oc) })
	}
}

// Two features of the same sentences share one lengths input; the file
// takes them padded alike. Sharing the lengths of other offsets is an
// error.
func TestSharedLengths(t *testing.T) {
	rng := tensor.NewRNG(3)
	w := randT(t, rng, 2, 3)
	example := func(n int) ([]int, *tensor.Tensor, *tensor.Tensor) {
		off := []int{0}
		for range n {
			off = append(off, off[len(off)-1]+1+rng.IntN(4))
		}
		return off, randT(t, rng, off[n], 2), randT(t, rng, off[n], 2)
	}
	forward := func(off []int) func(*graph.Tape, []*tensor.Tensor) *graph.Value {
		return func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
			h := graph.Linear(graph.Add(tape.Const(in[0]), graph.Square(tape.Const(in[1]))), tape.Const(w), nil)
			return graph.SequencePool(graph.Seq{Values: h, Offsets: off}, ops.SequencePoolMax, 0)
		}
	}
	off, a, b := example(3)
	opts := export.Options{Inputs: []export.Input{{Name: "a", Offsets: off, Lengths: "n"}, {Name: "b", Offsets: off, Lengths: "n"}}}
	var buf bytes.Buffer
	require.NoError(t, export.Export(&buf, forward(off), []*tensor.Tensor{a, b}, opts))
	m, err := onnx.Decode(bytes.NewReader(buf.Bytes()), int64(buf.Len()), onnx.Options{})
	require.NoError(t, err)
	require.Len(t, m.Graph.Inputs, 3) // a, n, b
	c, err := run.Compile(m)
	require.NoError(t, err)
	off, a, b = example(5)
	want, err := forward(off)(graph.NewEvalTape(), []*tensor.Tensor{a, b}).Tensor()
	require.NoError(t, err)
	pa, l := padRows(a, off, 9)
	pb, _ := padRows(b, off, 9)
	got, err := c.Run(map[string]*tensor.Tensor{"a": pa, "b": pb, "n": l})
	require.NoError(t, err)
	assert.LessOrEqual(t, maxAbsDiff(t, want, got["output"]), 1e-5)

	opts.Inputs[0].Offsets = off
	opts.Inputs[1].Offsets = []int{0, 2, 3, off[len(off)-1]}
	_, err = export.Marshal(forward(off), []*tensor.Tensor{a, b}, opts)
	assert.ErrorContains(t, err, `input "b" shares lengths "n" with input "a", but its offsets`)
}

// Inputs and an output named like the exporter's own values (v1, v2, ...)
// keep their names, and the graph stays well formed.
func TestNamesDoNotCollide(t *testing.T) {
	rng := tensor.NewRNG(4)
	w, b := randT(t, rng, 3, 2), randT(t, rng, 2)
	x := randT(t, rng, 4, 3)
	forward := func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
		return graph.Tanh(graph.Relu(graph.Linear(tape.Const(in[0]), tape.Const(w), tape.Const(b))))
	}
	bs, err := export.Marshal(forward, []*tensor.Tensor{x}, export.Options{Inputs: []export.Input{{Name: "v1"}}, Output: "v3"})
	require.NoError(t, err)
	m, err := onnx.Decode(bytes.NewReader(bs), int64(len(bs)), onnx.Options{})
	require.NoError(t, err)
	c, err := run.Compile(m)
	require.NoError(t, err)
	out, err := c.Run(map[string]*tensor.Tensor{"v1": x})
	require.NoError(t, err)
	want, err := forward(graph.NewEvalTape(), []*tensor.Tensor{x}).Tensor()
	require.NoError(t, err)
	assert.LessOrEqual(t, maxAbsDiff(t, want, out["v3"]), 1e-6)
	seen := map[string]bool{}
	for _, n := range m.Graph.Nodes {
		for _, o := range n.Outputs {
			require.False(t, seen[o], "value %s produced twice", o)
			require.NotEqual(t, "v1", o)
			seen[o] = true
		}
	}
}

// Every op Export writes is a registered Plumb op and is in docs/onnx.md's
// export table.
func TestSupportedOpsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/onnx.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "## Export a model")
	require.True(t, ok)
	section, _, _ = strings.Cut(section, "\n## ")
	rows := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, w := range strings.FieldsFunc(first, func(r rune) bool { return r == ',' || r == ' ' || r == '(' || r == ')' }) {
			rows[w] = true
		}
	}
	require.NotEmpty(t, export.Supported())
	for _, name := range export.Supported() {
		assert.True(t, rows[name], "op %s is not in docs/onnx.md's export table", name)
		_, ok := ops.Lookup(name)
		assert.True(t, ok, "op %s is not a registered Plumb op", name)
	}
}

// LSTM and GRU over a ragged batch from initial states computed from a
// dense input (the final states of empty sentences are those states).
func TestInitialStates(t *testing.T) {
	rng := tensor.NewRNG(8)
	const h = 3
	lw, lu, lb := randT(t, rng, 2, 4*h), randT(t, rng, h, 4*h), randT(t, rng, 4*h)
	gw, gu, gb := randT(t, rng, 2, 3*h), randT(t, rng, h, 3*h), randT(t, rng, 2, 3*h)
	wh := randT(t, rng, 2, h)
	example := func(n int) ([]int, *tensor.Tensor, *tensor.Tensor) {
		off := []int{0}
		for q := range n {
			l := 1 + rng.IntN(4)
			if q%3 == 1 {
				l = 0
			}
			off = append(off, off[q]+l)
		}
		return off, randT(t, rng, off[n], 2), randT(t, rng, n, 2)
	}
	forward := func(off []int) func(*graph.Tape, []*tensor.Tensor) *graph.Value {
		return func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
			k := tape.Const
			s := graph.Seq{Values: k(in[0]), Offsets: off}
			h0 := graph.Tanh(graph.Linear(k(in[1]), k(wh), nil))
			c0 := graph.Sigmoid(h0)
			hs, fl := graph.LSTM(s, graph.LSTMWeights{W: k(lw), U: k(lu), B: k(lb)}, &graph.LSTMState{H: h0, C: c0}, true)
			gs, fg := graph.GRU(s, graph.GRUWeights{W: k(gw), U: k(gu), B: k(gb), ResetAfter: true}, h0, false)
			return graph.Concat(1, fl.H, fl.C, fg, graph.SequencePool(hs, ops.SequencePoolSum, 0), graph.SequencePool(gs, ops.SequencePoolMax, 0))
		}
	}
	off, x, d := example(3)
	opts := export.Options{Inputs: []export.Input{{Name: "x", Offsets: off}, {Name: "d"}}}
	var buf bytes.Buffer
	require.NoError(t, export.Export(&buf, forward(off), []*tensor.Tensor{x, d}, opts))
	m, err := onnx.Decode(bytes.NewReader(buf.Bytes()), int64(buf.Len()), onnx.Options{})
	require.NoError(t, err)
	c, err := run.Compile(m)
	require.NoError(t, err)
	var cases []map[string]any
	for _, n := range []int{1, 4, 7} {
		off, x, d := example(n)
		want, err := forward(off)(graph.NewEvalTape(), []*tensor.Tensor{x, d}).Tensor()
		require.NoError(t, err)
		px, l := padRows(x, off, 5)
		feeds := map[string]*tensor.Tensor{"x": px, "x_lengths": l, "d": d}
		got, err := c.Run(feeds)
		require.NoError(t, err)
		assert.LessOrEqual(t, maxAbsDiff(t, want, got["output"]), 1e-5, "batch %d", n)
		cases = append(cases, map[string]any{"inputs": tensorsJSON(feeds), "want": tensorJSON(want)})
	}
	saveForORT(t, "op_initial_states", buf.Bytes(), cases)
}
