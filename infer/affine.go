package infer

import (
	"errors"
	"fmt"
	"math"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// affineOp is inference-mode batch normalisation with its statistics
// folded into numbers per channel: y = (x − mu[c])·k[c] + b[c] over axis 1
// of x ([N, C] or [N, C, ...]), with k = gamma/√(var + ε) and b = beta,
// computed in float64 by the same vec.Affine loop as ops' batch_norm, so
// the plan gives the eval tape's bits (Keras BatchNormalization at
// inference: gamma·(x − moving_mean)/√(moving_var + ε) + beta).
type affineOp struct {
	mu, k, b []float64
}

// affineFromBatchNorm returns the affine op of a batch_norm node whose
// gamma, beta, moving mean and moving variance are the constants in.
func affineFromBatchNorm(a ops.BatchNormAttrs, gamma, beta, mean, variance *tensor.Tensor) *affineOp {
	c := gamma.Size()
	o := &affineOp{mu: make([]float64, c), k: make([]float64, c), b: make([]float64, c)}
	for ch := 0; ch < c; ch++ {
		inv := 1 / math.Sqrt(variance.At(ch)+a.Epsilon)
		o.mu[ch], o.k[ch], o.b[ch] = mean.At(ch), gamma.At(ch)*inv, beta.At(ch)
	}
	return o
}

func (o *affineOp) Name() string { return "batch_norm_affine" }

func (o *affineOp) check(in []*tensor.Tensor) error {
	if len(in) != 1 || in[0] == nil || in[0].Rank() < 2 || in[0].Dim(1) != len(o.k) || !in[0].DType().IsFloat() {
		return ops.Errorf(o.Name(), in, "want one float input [N, %d, ...]", len(o.k))
	}
	return nil
}

func (o *affineOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := o.check(in); err != nil {
		return nil, err
	}
	out := tensor.Empty(in[0].DType(), in[0].Shape()...)
	return out, o.ForwardInto(out, in)
}

func (o *affineOp) Backward([]*tensor.Tensor, *tensor.Tensor, *tensor.Tensor, []bool) ([]*tensor.Tensor, error) {
	return nil, errors.New("batch_norm_affine: an inference plan's op has no gradient")
}

// ForwardInto is the op's ops.Into.
func (o *affineOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	if err := o.check(in); err != nil {
		return err
	}
	if !sameSig(out, in[0].DType(), in[0].Shape()) {
		return ops.Errorf(o.Name(), in, "ForwardInto an output of another shape")
	}
	x := in[0]
	n, c, hw := x.Dim(0), x.Dim(1), x.Shape()[2:].Size()
	switch x.DType() {
	case tensor.Float32:
		affineKernel(x.Float32s(), out.Float32s(), n, c, hw, o)
	case tensor.Float64:
		affineKernel(x.Float64s(), out.Float64s(), n, c, hw, o)
	}
	return nil
}

// affineKernel runs the channels over the cores (par.RowsOf), each as n
// runs of hw elements.
func affineKernel[T tensor.Float](x, y []T, n, c, hw int, o *affineOp) {
	par.RowsOf(c, n*hw, affineJob[T]{x: x, y: y, n: n, c: c, hw: hw, o: o})
}

// affineJob is affineKernel's loop body, a job so that the loop allocates
// nothing.
type affineJob[T tensor.Float] struct {
	x, y     []T
	n, c, hw int
	o        *affineOp
}

func (j *affineJob[T]) Range(_, lo, hi int) {
	for ch := lo; ch < hi; ch++ {
		for b := 0; b < j.n; b++ {
			at := (b*j.c + ch) * j.hw
			vec.Affine(j.y[at:at+j.hw], j.x[at:at+j.hw], j.o.mu[ch], j.o.k[ch], j.o.b[ch])
		}
	}
}

// String describes the op for Explain.
func (o *affineOp) String() string { return fmt.Sprintf("%d channels", len(o.k)) }

// lowerBatchNorm replaces every inference-mode batch_norm whose statistics
// and scale are constants by an affineOp.
func lowerBatchNorm(g *Graph) (int, error) {
	n := 0
	for i, nd := range g.nodes {
		if nd.op.Name() != "batch_norm" || len(nd.in) != 5 {
			continue
		}
		at, ok := nd.op.(ops.Attributed)
		if !ok {
			continue
		}
		a, ok := at.Attrs().(ops.BatchNormAttrs)
		if !ok || a.Training || !g.allConst(nd.in[1:]) {
			continue
		}
		c := g.values
		g.nodes[i] = node{op: affineFromBatchNorm(a, c[nd.in[1]].c, c[nd.in[2]].c, c[nd.in[3]].c, c[nd.in[4]].c), in: []Ref{nd.in[0]}, out: nd.out}
		n++
	}
	return n, nil
}

// allConst reports whether every value of rs is a constant.
func (g *Graph) allConst(rs []Ref) bool {
	for _, r := range rs {
		if g.values[r].kind != kindConst {
			return false
		}
	}
	return true
}
