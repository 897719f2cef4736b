package infer

import (
	"github.com/plumbml/plumb/ops"
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

// foldAffineForward folds a batch norm (an affineOp) into the unpadded,
// ungrouped convolution that alone reads it: with x' = (x − mu)·k + beta
// per input channel c, conv(x'; W) + b = conv(x; W') + b', where
// W'[o, c] = W[o, c]·k[c] and b'[o] = b[o] + Σ_{c,i,j} W[o, c, i, j]·
// (beta[c] − mu[c]·k[c]). With zero padding the padded border would be
// zeros of x', not of x, so a padded convolution keeps its batch norm.
// (The book's MNIST CNN normalises after pooling, before its second,
// VALID, convolution.)
func foldAffineForward(g *Graph) (int, error) {
	uses := g.uses()
	n := 0
	for i := range g.nodes {
		a, ok := g.nodes[i].op.(*affineOp)
		out := g.nodes[i].out
		if !ok || out < 0 || len(uses[out]) != 1 || g.isOutput(out) {
			continue
		}
		j := uses[out][0]
		cn := g.nodes[j]
		if cn.op.Name() != "conv2d" || cn.in[0] != out || !g.allConst(cn.in[1:]) {
			continue
		}
		at, ok := cn.op.(ops.Attributed)
		if !ok {
			continue
		}
		ca, ok := at.Attrs().(ops.Conv2DAttrs)
		if !ok || ca.Pad != [4]int{} || ca.Padding == ops.PadSame || ca.Groups > 1 {
			continue
		}
		w := g.values[cn.in[1]].c
		var b *tensor.Tensor
		if len(cn.in) == 3 {
			b = g.values[cn.in[2]].c
		}
		w2, b2 := foldInputWeights(w, b, a)
		g.nodes[j] = node{op: cn.op, in: []Ref{g.nodes[i].in[0], g.constant(w2), g.constant(b2)}, out: cn.out}
		g.nodes[i].out = -1
		n++
	}
	g.dropDead()
	return n, nil
}

// foldInputWeights returns W'[o, c] = W[o, c]·k[c] and
// b'[o] = b[o] + Σ W[o, c, i, j]·(beta[c] − mu[c]·k[c]) for W [O, C, KH, KW].
func foldInputWeights(w, b *tensor.Tensor, a *affineOp) (*tensor.Tensor, *tensor.Tensor) {
	o, c := w.Dim(0), w.Dim(1)
	kk := w.Size() / max(o*c, 1)
	w2 := tensor.Empty(w.DType(), w.Shape()...)
	b2 := tensor.Empty(w.DType(), o)
	for oc := 0; oc < o; oc++ {
		sum := 0.0
		if b != nil {
			sum = b.At(oc)
		}
		for ch := 0; ch < c; ch++ {
			shift := a.b[ch] - a.mu[ch]*a.k[ch]
			for t := 0; t < kk; t++ {
				at := (oc*c+ch)*kk + t
				w2.SetAt(at, w.At(at)*a.k[ch])
				sum += w.At(at) * shift
			}
		}
		b2.SetAt(oc, sum)
	}
	return w2, b2
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
