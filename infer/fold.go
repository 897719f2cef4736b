package infer

import (
	"github.com/plumbml/plumb/tensor"
)

// foldAffine folds a batch norm (an affineOp, after lowerBatchNorm) into
// the convolution or linear layer whose output it alone reads, as
// TensorRT, ONNX Runtime and PyTorch's fuse_conv_bn_eval do: with
// y = (conv(x; W) + b − mu)·k + beta per output channel,
// W' = W·k (each output channel's filter scaled) and b' = (b − mu)·k + beta,
// so y = conv(x; W') + b'. The new weights are new constants, computed
// in float64; the model's parameters are untouched.
func foldAffine(g *Graph) (int, error) {
	uses := g.uses()
	n := 0
	for i := range g.nodes {
		a, ok := g.nodes[i].op.(*affineOp)
		if !ok {
			continue
		}
		src := g.nodes[i].in[0]
		p := g.producer(src)
		if p < 0 || len(uses[src]) != 1 || g.isOutput(src) {
			continue
		}
		pn := g.nodes[p]
		name := pn.op.Name()
		if (name != "conv2d" && name != "linear") || !g.allConst(pn.in[1:]) {
			continue
		}
		w := g.values[pn.in[1]].c
		if name == "linear" && len(g.values[src].shape) != 2 { // batch norm's axis 1 is linear's last only at rank 2
			continue
		}
		var b *tensor.Tensor
		if len(pn.in) == 3 {
			b = g.values[pn.in[2]].c
		}
		w2, b2 := foldWeights(w, b, a, name == "conv2d")
		g.nodes[p] = node{op: pn.op, in: []Ref{pn.in[0], g.constant(w2), g.constant(b2)}, out: g.nodes[i].out}
		g.nodes[i] = node{op: g.nodes[i].op, in: g.nodes[i].in, out: -1} // dropped by pruned
		n++
	}
	g.dropDead()
	return n, nil
}

// foldWeights returns W·k and (b − mu)·k + beta; the output channel is
// W's axis 0 for a convolution ([O, C, KH, KW]) and axis 1 for linear
// ([in, out]).
func foldWeights(w, b *tensor.Tensor, a *affineOp, conv bool) (*tensor.Tensor, *tensor.Tensor) {
	c := len(a.k)
	w2 := tensor.Empty(w.DType(), w.Shape()...)
	per := w.Size() / max(c, 1)
	for i := 0; i < w.Size(); i++ {
		ch := i / max(per, 1)
		if !conv {
			ch = i % c
		}
		w2.SetAt(i, w.At(i)*a.k[ch])
	}
	b2 := tensor.Empty(w.DType(), c)
	for ch := 0; ch < c; ch++ {
		bias := 0.0
		if b != nil {
			bias = b.At(ch)
		}
		b2.SetAt(ch, (bias-a.mu[ch])*a.k[ch]+a.b[ch])
	}
	return w2, b2
}

// producer returns the index of the node that makes r, or -1.
func (g *Graph) producer(r Ref) int {
	if g.values[r].kind != kindOp {
		return -1
	}
	for i, n := range g.nodes {
		if n.out == r {
			return i
		}
	}
	return -1
}

// constant adds t as a new constant value.
func (g *Graph) constant(t *tensor.Tensor) Ref {
	g.values = append(g.values, value{kind: kindConst, dt: t.DType(), shape: t.Shape().Clone(), c: t})
	return Ref(len(g.values) - 1)
}

// dropDead removes the nodes a pass marked dead (out < 0).
func (g *Graph) dropDead() {
	k := g.nodes[:0]
	for _, n := range g.nodes {
		if n.out >= 0 {
			k = append(k, n)
		}
	}
	g.nodes = k
}
