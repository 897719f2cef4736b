package infer

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// foldLinearChains folds two consecutive linear layers with nothing
// between them, the first's output read only by the second, into one:
// (x·W1 + b1)·W2 + b2 = x·(W1·W2) + (b1·W2 + b2), the new weights
// computed once in float64 (the fc-chain fusion of Paddle Fluid's
// analysis passes and TensorRT's; the algebra is associativity). It folds
// only where that reduces the work, k·n2 < k·n1 + n1·n2 multiply-adds a
// row for W1 [k, n1] and W2 [n1, n2]: a bottleneck (n1 small, as in a
// low-rank factorisation) is cheaper as two products, and is left as two
// steps rather than run as one, since all a fused step could save is
// writing and reading the [rows, n1] intermediate, the smallest tensor
// of the three. A chain of three or more folds pairwise, in order.
func foldLinearChains(g *Graph) (int, error) {
	sole := g.soleReader()
	n := 0
	for i := range g.nodes {
		a := g.nodes[i]
		if a.out < 0 || !g.constLinear(a) {
			continue
		}
		j := sole(a.out)
		if j < 0 || !g.constLinear(g.nodes[j]) || g.nodes[j].in[0] != a.out {
			continue
		}
		b := g.nodes[j]
		w1, w2 := g.values[a.in[1]].c, g.values[b.in[1]].c
		k, n1, n2 := w1.Dim(0), w1.Dim(1), w2.Dim(1)
		if w1.DType() != w2.DType() || k*n2 >= k*n1+n1*n2 {
			continue
		}
		var b1, b2 *tensor.Tensor
		if len(a.in) == 3 {
			b1 = g.values[a.in[2]].c
		}
		if len(b.in) == 3 {
			b2 = g.values[b.in[2]].c
		}
		w, bias := foldLinearWeights(w1, b1, w2, b2)
		in := []Ref{a.in[0], g.constant(w)}
		if bias != nil {
			in = append(in, g.constant(bias))
		}
		g.nodes[j] = node{op: ops.LinearOp(), in: in, out: b.out}
		g.nodes[i].out = -1
		n++
	}
	g.dropDead()
	return n, nil
}

// constLinear reports whether nd is a linear layer whose weights [k, n]
// (and bias, if any) are constants of a float dtype.
func (g *Graph) constLinear(nd node) bool {
	if nd.op.Name() != "linear" || len(nd.in) < 2 || !g.allConst(nd.in[1:]) {
		return false
	}
	w := g.values[nd.in[1]]
	return len(w.shape) == 2 && w.dt.IsFloat()
}

// foldLinearWeights returns W1·W2 and b1·W2 + b2 (nil when neither layer
// has a bias), summed in float64.
func foldLinearWeights(w1, b1, w2, b2 *tensor.Tensor) (*tensor.Tensor, *tensor.Tensor) {
	k, n1, n2 := w1.Dim(0), w1.Dim(1), w2.Dim(1)
	a, c := asFloat64s(w1), asFloat64s(w2)
	w := tensor.Empty(w1.DType(), k, n2)
	row := make([]float64, n2)
	for r := 0; r < k; r++ {
		clear(row)
		for m := 0; m < n1; m++ {
			x := a[r*n1+m]
			for j := range row {
				row[j] += x * c[m*n2+j]
			}
		}
		for j, v := range row {
			w.SetAt(r*n2+j, v)
		}
	}
	if b1 == nil && b2 == nil {
		return w, nil
	}
	bias := tensor.Empty(w1.DType(), n2)
	for j := 0; j < n2; j++ {
		s := 0.0
		if b2 != nil {
			s = b2.At(j)
		}
		if b1 != nil {
			for m := 0; m < n1; m++ {
				s += b1.At(m) * c[m*n2+j]
			}
		}
		bias.SetAt(j, s)
	}
	return w, bias
}

// asFloat64s returns t's elements as float64s (t's own when it is
// float64; read only).
func asFloat64s(t *tensor.Tensor) []float64 {
	c, err := t.Cast(tensor.Float64)
	if err != nil { // a float tensor always casts
		return nil
	}
	return c.Float64s()
}
