package infer_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// A graph built node by node (as an importer would) runs as the ops do
// one by one, and the builder's errors name the node.
func TestBuilder(t *testing.T) {
	b := infer.NewBuilder()
	x := b.Input(tensor.Float32, 3, 4)
	w := randInput(t, 1, 4, 5)
	bias := randInput(t, 2, 5)
	h := b.Op(ops.LinearOp(), x, b.Const(w), b.Const(bias))
	y := b.Op(ops.SoftmaxOp(-1), b.Op(ops.UnaryOp("tanh"), h))
	g, err := b.Graph(y)
	require.NoError(t, err)
	require.Equal(t, 3, g.Len())
	require.Equal(t, "[float32[3 4]]", sigString(g.Inputs()))
	p, err := g.Compile(infer.Options{})
	require.NoError(t, err)
	require.Equal(t, "[float32[3 5]]", sigString(p.Outputs()))

	in := randInput(t, 3, 3, 4)
	want, err := ops.Linear(in, w, bias)
	require.NoError(t, err)
	want, err = ops.Tanh(want)
	require.NoError(t, err)
	want, err = ops.Softmax(want, -1)
	require.NoError(t, err)
	got, err := p.Forward(in)
	require.NoError(t, err)
	requireClose(t, want, got[0], 1e-6)

	bad := infer.NewBuilder()
	x = bad.Input(tensor.Float32, 3, 4)
	bad.Op(ops.LinearOp(), x, bad.Const(randInput(t, 4, 5, 5)))
	_, err = bad.Graph(x)
	require.ErrorContains(t, err, "infer: node 0: linear: inputs float32[3 4], float32[5 5]")
	_, err = infer.NewBuilder().Graph()
	require.ErrorContains(t, err, "needs an output")
	_, err = infer.NewBuilder().Graph(7)
	require.ErrorContains(t, err, "output 0 is not a value")
}

func sigString(s []infer.Signature) string {
	var b bytes.Buffer
	b.WriteString("[")
	for i, x := range s {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(x.String())
	}
	b.WriteString("]")
	return b.String()
}

// Run checks its inputs and output against the plan's signature.
func TestRunErrors(t *testing.T) {
	p := mnistPlan(t, "mlp", 2, infer.Options{})
	out := tensor.Empty(tensor.Float32, 2, 10)
	require.ErrorContains(t, p.Run(out, randInput(t, 4, 3, 1, 28, 28)), "input 0 is float32[3 1 28 28]; the plan was compiled for a host tensor float32[2 1 28 28]")
	require.ErrorContains(t, p.Run(out), "Run with 0 inputs; the plan takes 1")
	require.ErrorContains(t, p.Run(tensor.Empty(tensor.Float32, 2, 9), randInput(t, 4, 2, 1, 28, 28)), "Run into an output float32[2 9]; want a host tensor float32[2 10]")
	require.ErrorContains(t, p.Run(nil, randInput(t, 4, 2, 1, 28, 28)), "nil output")
	net, err := mnist.New("mlp", tensor.NewRNG(2))
	require.NoError(t, err)
	_, err = infer.TraceLayer(net, nil)
	require.ErrorContains(t, err, "example input 0 is nil")
	_, err = infer.TraceLayer(net, randInput(t, 4, 2, 1, 28, 27))
	require.ErrorContains(t, err, "infer: Trace: ")
}

// One plan serves many goroutines at once, each call with its own arena,
// and every goroutine gets what one call alone gets (run under -race).
func TestConcurrentRuns(t *testing.T) {
	p := mnistPlan(t, "cnn", 2, infer.Options{})
	const workers = 8
	inputs := make([]*tensor.Tensor, workers)
	wants := make([]*tensor.Tensor, workers)
	for i := range inputs {
		inputs[i] = randInput(t, uint64(10+i), 2, 1, 28, 28)
		wants[i] = tensor.Empty(tensor.Float32, 2, 10)
		require.NoError(t, p.Run(wants[i], inputs[i]))
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	outs := make([]*tensor.Tensor, workers)
	for i := range workers {
		outs[i] = tensor.Empty(tensor.Float32, 2, 10)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if errs[i] = p.Run(outs[i], inputs[i]); errs[i] != nil {
					return
				}
				if !equal(outs[i], wants[i]) {
					errs[i] = errMismatch
					return
				}
			}
		}()
	}
	wg.Wait()
	for i := range workers {
		require.NoError(t, errs[i], "goroutine %d", i)
	}
}

var errMismatch = bytes.ErrTooLarge // any non-nil error: a goroutine's output differed

func equal(a, b *tensor.Tensor) bool {
	x, y := a.Float32s(), b.Float32s()
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return len(x) == len(y)
}

// The memory plan shares slots: a chain of ten element-wise ops on one
// shape needs two slots, not ten, and gives the ops' result.
func TestMemoryPlanSharesSlots(t *testing.T) {
	b := infer.NewBuilder()
	x := b.Input(tensor.Float64, 4, 5)
	v := x
	for i := 0; i < 10; i++ {
		v = b.Op(ops.UnaryOp([]string{"tanh", "neg"}[i%2]), v)
	}
	g, err := b.Graph(v)
	require.NoError(t, err)
	p, err := g.Compile(infer.Options{NoFusion: true}) // fused, the chain is one step
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, p.Explain(&buf))
	require.Contains(t, buf.String(), "arena: 0 float32 + 40 float64 elements for 200 elements of intermediates")
	in := randInput(t, 5, 4, 5)
	in64, err := in.Cast(tensor.Float64)
	require.NoError(t, err)
	want := in64
	for i := 0; i < 10; i++ {
		want, err = ops.Run(ops.UnaryOp([]string{"tanh", "neg"}[i%2]), want)
		require.NoError(t, err)
	}
	got, err := p.Forward(in64)
	require.NoError(t, err)
	require.Equal(t, want.Float64s(), got[0].Float64s())
}

// Explain prints both graphs with shapes and FLOP shares, the passes and
// the arena.
func TestExplain(t *testing.T) {
	p := mnistPlan(t, "cnn", 1, infer.Options{})
	var buf bytes.Buffer
	require.NoError(t, p.Explain(&buf))
	s := buf.String()
	for _, want := range []string{
		"inputs [float32[1 1 28 28]] -> outputs [float32[1 10]]",
		"before the passes: 9 ops",
		"batch norm as scale and shift: 1",
		"bias, residual and activation epilogues: 2",
		"batch norm folded into the unpadded conv after it: 1",
		"after the passes: 6 ops",
		"conv2d+relu  [1 20 12 12] w[50 20 5 5] w[50]  -> [1 50 8 8]     84.1%",
		"reshape      [1 50 4 4]                       -> [1 800]         0.0%  view",
		"total 3.81e+06 FLOPs a call",
		"every step runs into the arena",
	} {
		require.Contains(t, s, want)
	}
	require.Error(t, p.Explain(nil))
}

// A layer's forward pass with a tape-level shortcut (dropout, identity on
// an inference tape) traces to the ops that ran.
func TestTraceSkipsInferenceIdentities(t *testing.T) {
	fc, err := layers.NewLinear("fc", 6, 3, tensor.NewRNG(1))
	require.NoError(t, err)
	g, err := infer.Trace(func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
		return fc.Forward(graph.Dropout(tape.Const(in[0]), 0.5, tensor.NewRNG(1)))
	}, randInput(t, 1, 2, 6))
	require.NoError(t, err)
	require.Equal(t, 1, g.Len())
}

// evalTape runs l on x on an inference tape, the reference a plan matches.
func evalTape(t testing.TB, l layers.Layer, x *tensor.Tensor) *tensor.Tensor {
	tape := graph.NewEvalTape()
	y, err := l.Forward(tape.Const(x)).Tensor()
	require.NoError(t, err)
	return y
}

// requireClose checks |got − want| <= rel·max(|want|, 1) element by element.
func requireClose(t testing.TB, want, got *tensor.Tensor, rel float64) {
	t.Helper()
	require.Equal(t, want.Shape(), got.Shape())
	for i := 0; i < want.Size(); i++ {
		w, g := want.At(i), got.At(i)
		require.InDelta(t, w, g, rel*max(abs(w), 1), "element %d", i)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func randInput(t testing.TB, seed uint64, shape ...int) *tensor.Tensor {
	x, err := tensor.RandUniform(tensor.NewRNG(seed), tensor.Float32, 0, 1, shape...)
	require.NoError(t, err)
	return x
}

// The MNIST MLP and CNN compiled from a trace give the eval tape's logits,
// fused or not, at batch 1 and at an odd batch, on an input other than the
// traced one.
func TestMNISTPlanMatchesEvalTape(t *testing.T) {
	for _, name := range []string{"mlp", "cnn"} {
		for _, batch := range []int{1, 7} {
			net, err := mnist.New(name, tensor.NewRNG(2))
			require.NoError(t, err)
			g, err := infer.TraceLayer(net, randInput(t, 3, batch, 1, 28, 28))
			require.NoError(t, err)
			x := randInput(t, 4, batch, 1, 28, 28)
			want := evalTape(t, net, x)
			for _, opts := range []infer.Options{{NoFusion: true}, {}} {
				p, err := g.Compile(opts)
				require.NoError(t, err)
				out := tensor.Empty(tensor.Float32, batch, 10)
				require.NoError(t, p.Run(out, x))
				requireClose(t, want, out, 1e-5)
			}
		}
	}
}

// mnistPlan traces the book's MNIST model name at batch and compiles it.
func mnistPlan(t testing.TB, name string, batch int, opts infer.Options) *infer.Plan {
	g, err := infer.TraceLayer(mnistNet(t, name), randInput(t, 3, batch, 1, 28, 28))
	require.NoError(t, err)
	p, err := g.Compile(opts)
	require.NoError(t, err)
	return p
}

// mnistNet is the book's MNIST model name, seeded.
func mnistNet(t testing.TB, name string) mnist.Model {
	net, err := mnist.New(name, tensor.NewRNG(2))
	require.NoError(t, err)
	return net
}
