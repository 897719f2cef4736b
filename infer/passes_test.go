package infer_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// fusedMatchesUnfused compiles g with and without the passes, checks that
// Explain reports each want (what the passes did) and that both plans give
// the same outputs within float32 tolerance on a new input; it returns
// the unfused and fused plans' first outputs.
func fusedMatchesUnfused(t *testing.T, g *infer.Graph, in []*tensor.Tensor, want ...string) (*tensor.Tensor, *tensor.Tensor) {
	t.Helper()
	plain, err := g.Compile(infer.Options{NoFusion: true})
	require.NoError(t, err)
	fused, err := g.Compile(infer.Options{})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, fused.Explain(&buf))
	for _, w := range want {
		require.Contains(t, buf.String(), w)
	}
	a, err := plain.Forward(in...)
	require.NoError(t, err)
	b, err := fused.Forward(in...)
	require.NoError(t, err)
	requireClose(t, a[0], b[0], 1e-5)
	return a[0], b[0]
}

// batchNorm adds an inference batch norm over c channels with statistics
// and scales drawn from seed.
func batchNorm(t *testing.T, b *infer.Builder, x infer.Ref, c int, seed uint64) infer.Ref {
	gamma := randRange(t, seed, 0.5, 2, c)
	beta := randRange(t, seed+1, -1, 1, c)
	mean := randRange(t, seed+2, -1, 1, c)
	variance := randRange(t, seed+3, 0.2, 3, c)
	return b.Op(ops.BatchNormOp(ops.BatchNormAttrs{Epsilon: 1e-3}), x, b.Const(gamma), b.Const(beta), b.Const(mean), b.Const(variance))
}

func randRange(t testing.TB, seed uint64, lo, hi float64, shape ...int) *tensor.Tensor {
	x, err := tensor.RandUniform(tensor.NewRNG(seed), tensor.Float32, lo, hi, shape...)
	require.NoError(t, err)
	return x
}

// Batch norm after a padded, strided convolution (with and without bias)
// and after a linear layer folds into their weights.
func TestFoldBatchNorm(t *testing.T) {
	for _, bias := range []bool{true, false} {
		b := infer.NewBuilder()
		x := b.Input(tensor.Float32, 2, 3, 9, 7)
		ins := []infer.Ref{x, b.Const(randRange(t, 1, -1, 1, 5, 3, 3, 3))}
		if bias {
			ins = append(ins, b.Const(randRange(t, 2, -1, 1, 5)))
		}
		c := b.Op(ops.Conv2DOp(ops.Conv2DAttrs{Stride: [2]int{2, 1}, Padding: ops.PadSame}), ins...)
		y := batchNorm(t, b, c, 5, 10)
		g, err := b.Graph(y)
		require.NoError(t, err)
		fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 3, -2, 2, 2, 3, 9, 7)},
			"batch norm folded into conv/linear: 1", "after the passes: 1 ops")
	}
	b := infer.NewBuilder()
	x := b.Input(tensor.Float32, 4, 6)
	h := b.Op(ops.LinearOp(), x, b.Const(randRange(t, 1, -1, 1, 6, 11)))
	g, err := b.Graph(batchNorm(t, b, h, 11, 20))
	require.NoError(t, err)
	fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 3, -2, 2, 4, 6)},
		"batch norm folded into conv/linear: 1", "after the passes: 1 ops")
}

// A batch norm before an unpadded convolution (MNIST CNN's) folds into
// it, with and without the convolution's bias; before a padded one it
// stays, since the padding would be zeros of the normalised input.
func TestFoldBatchNormForward(t *testing.T) {
	for _, c := range []struct {
		attrs ops.Conv2DAttrs
		bias  bool
		want  string
	}{
		{ops.Conv2DAttrs{Stride: [2]int{2, 1}}, true, "batch norm folded into the unpadded conv after it: 1"},
		{ops.Conv2DAttrs{}, false, "batch norm folded into the unpadded conv after it: 1"},
		{ops.Conv2DAttrs{Padding: ops.PadSame}, true, "batch_norm_affine"},
		{ops.Conv2DAttrs{Pad: [4]int{0, 1, 0, 0}}, true, "batch_norm_affine"},
	} {
		b := infer.NewBuilder()
		x := b.Input(tensor.Float32, 2, 3, 9, 8)
		ins := []infer.Ref{batchNorm(t, b, x, 3, 50), b.Const(randRange(t, 1, -1, 1, 4, 3, 3, 2))}
		if c.bias {
			ins = append(ins, b.Const(randRange(t, 2, -1, 1, 4)))
		}
		g, err := b.Graph(b.Op(ops.Conv2DOp(c.attrs), ins...))
		require.NoError(t, err)
		fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 3, -2, 2, 2, 3, 9, 8)}, c.want)
	}
}

// A batch norm whose input another op also reads, or that follows no
// product, stays a step of its own, and the plan still matches.
func TestFoldBatchNormLeavesSharedOutputs(t *testing.T) {
	b := infer.NewBuilder()
	x := b.Input(tensor.Float32, 2, 4, 5, 5)
	c := b.Op(ops.Conv2DOp(ops.Conv2DAttrs{}), x, b.Const(randRange(t, 1, -1, 1, 4, 4, 1, 1)))
	y := b.Op(ops.BinaryOp("add"), batchNorm(t, b, c, 4, 30), c)
	z := batchNorm(t, b, y, 4, 40)
	g, err := b.Graph(z)
	require.NoError(t, err)
	fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 3, -2, 2, 2, 4, 5, 5)},
		"batch norm as scale and shift: 2", "batch_norm_affine")
}

// Bias, residual add and activation after a convolution or linear layer
// run as one epilogue step: conv + bias + add + relu (ResNet's block end),
// linear + sigmoid, linear + tanh, and an add whose residual is the first
// operand.
func TestEpilogues(t *testing.T) {
	b := infer.NewBuilder()
	x := b.Input(tensor.Float32, 2, 8, 6, 6)
	c := b.Op(ops.Conv2DOp(ops.Conv2DAttrs{Padding: ops.PadSame}), x,
		b.Const(randRange(t, 1, -0.5, 0.5, 8, 8, 3, 3)), b.Const(randRange(t, 2, -1, 1, 8)))
	y := b.Op(ops.UnaryOp("relu"), b.Op(ops.BinaryOp("add"), c, x))
	g, err := b.Graph(y)
	require.NoError(t, err)
	fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 3, -2, 2, 2, 8, 6, 6)},
		"conv2d+add+relu", "after the passes: 1 ops")

	for _, act := range []string{"sigmoid", "tanh"} {
		b := infer.NewBuilder()
		x := b.Input(tensor.Float32, 3, 7)
		r := b.Op(ops.UnaryOp("neg"), x)
		h := b.Op(ops.LinearOp(), x, b.Const(randRange(t, 4, -1, 1, 7, 7)), b.Const(randRange(t, 5, -1, 1, 7)))
		y := b.Op(ops.UnaryOp(act), b.Op(ops.BinaryOp("add"), r, h))
		g, err := b.Graph(y)
		require.NoError(t, err)
		fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 6, -2, 2, 3, 7)},
			"linear+add+"+act, "after the passes: 2 ops")
	}
}

// An add that broadcasts is not a residual epilogue, and the activation
// after it reads the add, not the product: the product stays alone, and
// the add and relu run as one elementwise loop.
func TestEpilogueSkipsBroadcastAdd(t *testing.T) {
	b := infer.NewBuilder()
	x := b.Input(tensor.Float32, 3, 7)
	h := b.Op(ops.LinearOp(), x, b.Const(randRange(t, 4, -1, 1, 7, 7)))
	y := b.Op(ops.UnaryOp("relu"), b.Op(ops.BinaryOp("add"), h, b.Const(randRange(t, 5, -1, 1, 7))))
	g, err := b.Graph(y)
	require.NoError(t, err)
	fusedMatchesUnfused(t, g, []*tensor.Tensor{randRange(t, 6, -2, 2, 3, 7)}, "after the passes: 2 ops", "elementwise(add,relu)")
}
