package layers

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/gradcheck"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

func randn(seed uint64, shape ...int) *tensor.Tensor {
	t, err := tensor.RandNormal(tensor.NewRNG(seed), tensor.Float64, 0, 1, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

func TestLinearInitAndForward(t *testing.T) {
	l, err := NewLinear("fc", 30, 20, tensor.NewRNG(1))
	require.NoError(t, err)
	require.Equal(t, "fc/kernel", l.W.Name)
	require.Equal(t, "fc/bias", l.B.Name)
	limit := math.Sqrt(6.0 / 50)
	for _, v := range l.W.Value.Float32s() {
		require.LessOrEqual(t, math.Abs(float64(v)), limit)
	}
	require.Equal(t, make([]float32, 20), l.B.Value.Float32s())

	x, _ := tensor.RandNormal(tensor.NewRNG(2), tensor.Float32, 0, 1, 4, 30)
	got, err := l.Forward(graph.NewTape().Const(x)).Tensor()
	require.NoError(t, err)
	want, err := ops.Linear(x, l.W.Value, l.B.Value)
	require.NoError(t, err)
	require.Equal(t, want.Float32s(), got.Float32s())

	nb, err := NewLinear("nb", 3, 2, tensor.NewRNG(1), NoBias())
	require.NoError(t, err)
	require.Len(t, nb.Params(), 1)
}

func TestConstructorErrors(t *testing.T) {
	rng := tensor.NewRNG(1)
	_, err := NewLinear("fc", 0, 3, rng)
	require.ErrorContains(t, err, `linear "fc"`)
	_, err = NewConv2D("c", Conv2DConfig{In: 3, Out: 4, KH: 3, KW: 3, Attrs: ops.Conv2DAttrs{Groups: 2}}, rng)
	require.ErrorContains(t, err, "divisible by groups")
	// A negative stride is refused at construction, and the error names it
	// alone: the zero dilation and groups are valid (they mean 1).
	_, err = NewConv2D("c", Conv2DConfig{In: 3, Out: 4, KH: 3, KW: 3, Attrs: ops.Conv2DAttrs{Stride: [2]int{-1, 1}}}, rng)
	require.EqualError(t, err, `layers: conv2d "c": stride [-1 1]: want values >= 0 (0 means the default: 1, or no padding)`)
	_, err = NewConv2D("c", Conv2DConfig{In: 3, Out: 4, KH: 3, KW: 3, Attrs: ops.Conv2DAttrs{Dilation: [2]int{1, -2}, Pad: [4]int{0, -1, 0, 0}}}, rng)
	require.ErrorContains(t, err, "dilation [1 -2], padding [0 -1 0 0]: want")
	_, err = NewBatchNorm("bn", 0)
	require.ErrorContains(t, err, "batch norm")
	_, err = NewLayerNorm("ln", -1)
	require.ErrorContains(t, err, "layer norm")
	_, err = NewDropout(1, rng)
	require.ErrorContains(t, err, "dropout rate 1")
	_, err = NewDropout(0.5, nil)
	require.ErrorContains(t, err, "random source")
}

// A shape mistake deep inside a model comes out at the end, naming the op.
func TestShapeErrorSurfacesThroughSequential(t *testing.T) {
	fc1, _ := NewLinear("fc1", 8, 4, tensor.NewRNG(1))
	fc2, _ := NewLinear("fc2", 5, 2, tensor.NewRNG(1)) // wrong: fc1 gives 4
	net := Sequential{fc1, Activation(graph.Relu), fc2, Activation(graph.Tanh)}
	tape := graph.NewTape()
	_, err := net.Forward(tape.Const(tensor.Zeros(tensor.Float32, 3, 8))).Tensor()
	require.ErrorContains(t, err, "linear: inputs float32[3 4], float32[5 2], float32[2]")
	require.Len(t, net.Params(), 4)
}

func TestBatchNormFollowsTapeMode(t *testing.T) {
	bn, err := NewBatchNorm("bn", 2, DType(tensor.Float64))
	require.NoError(t, err)
	require.Len(t, Trainable(bn.Params()), 2)
	x := tensor.MustFromSlice([]float64{1, 10, 3, 20, 5, 30}, 3, 2)

	_, err = bn.Forward(graph.NewEvalTape().Const(x)).Tensor()
	require.NoError(t, err)
	require.Equal(t, []float64{0, 0}, bn.MovingMean.Value.Float64s(), "inference leaves the statistics alone")

	_, err = bn.Forward(graph.NewTape().Const(x)).Tensor()
	require.NoError(t, err)
	require.InDeltaSlice(t, []float64{0.03, 0.2}, bn.MovingMean.Value.Float64s(), 1e-12, "0.99*0 + 0.01*batch mean")
}

func TestDropoutIsIdentityAtInference(t *testing.T) {
	d, err := NewDropout(0.5, tensor.NewRNG(3))
	require.NoError(t, err)
	x, _ := tensor.Ones(tensor.Float32, 100)
	y, err := d.Forward(graph.NewEvalTape().Const(x)).Tensor()
	require.NoError(t, err)
	require.Same(t, x, y)
	y, err = d.Forward(graph.NewTape().Const(x)).Tensor()
	require.NoError(t, err)
	zeros := 0
	for _, v := range y.Float32s() {
		require.Contains(t, []float32{0, 2}, v)
		if v == 0 {
			zeros++
		}
	}
	require.InDelta(t, 50, zeros, 20)
}

// Every parameter gradient of a small CNN built from layers agrees with
// central differences (float64, training mode, so batch norm uses batch
// statistics and the gradient flows through them).
func TestSmallCNNGradients(t *testing.T) {
	rng := tensor.NewRNG(5)
	f64 := DType(tensor.Float64)
	conv, err := NewConv2D("conv", Conv2DConfig{In: 2, Out: 3, KH: 3, KW: 3, Attrs: ops.Conv2DAttrs{Padding: ops.PadSame}}, rng, f64)
	require.NoError(t, err)
	bn, err := NewBatchNorm("bn", 3, f64)
	require.NoError(t, err)
	ln, err := NewLayerNorm("ln", 12, f64)
	require.NoError(t, err)
	fc, err := NewLinear("fc", 12, 4, rng, f64)
	require.NoError(t, err)
	for _, p := range []*graph.Param{bn.Gamma, bn.Beta, ln.Gamma, ln.Beta, conv.B, fc.B} { // move off the trivial init
		p.Value = randn(uint64(len(p.Name)), p.Value.Shape()...)
	}
	net := Sequential{conv, bn, Activation(graph.Tanh), MaxPool2D{Attrs: ops.Pool2DAttrs{Kernel: [2]int{2, 2}}},
		AvgPool2D{Attrs: ops.Pool2DAttrs{Kernel: [2]int{1, 1}}}, Flatten{}, ln, fc}
	params := Trainable(net.Params())
	x := randn(9, 2, 2, 4, 4)

	in := make([]*tensor.Tensor, len(params))
	wrt := make([]int, len(params))
	for i, p := range params {
		in[i], wrt[i] = p.Value, i
	}
	fwd := func([]*tensor.Tensor) (*tensor.Tensor, error) {
		return net.Forward(graph.NewTape().Const(x)).Tensor()
	}
	bwd := func(_ []*tensor.Tensor, _, gout *tensor.Tensor) ([]*tensor.Tensor, error) {
		graph.ZeroGrads(params)
		tape := graph.NewTape()
		if err := tape.BackwardWith(net.Forward(tape.Const(x)), gout); err != nil {
			return nil, err
		}
		grads := make([]*tensor.Tensor, len(params))
		for i, p := range params {
			grads[i] = p.Grad
		}
		return grads, nil
	}
	require.NoError(t, gradcheck.Check(fwd, bwd, in, wrt, gradcheck.Default))
}
