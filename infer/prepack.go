package infer

import (
	"github.com/plumbml/plumb/ops"
)

// prepackLinear packs the constant weights of every linear step once, at
// compile time, into the GEMM's panel layout (ops.PackWeights, gemm.PackB),
// so no call packs them again: the product reads the panels
// (ops.LinearPackedOp), and gives LinearOp's results.
func prepackLinear(g *Graph) (int, error) {
	n := 0
	for i, nd := range g.nodes {
		if nd.op.Name() != "linear" || len(nd.in) < 2 {
			continue
		}
		w := g.values[nd.in[1]]
		if w.kind != kindConst || len(w.shape) != 2 || !w.dt.IsFloat() {
			continue
		}
		pw, err := ops.PackWeights(w.c)
		if err != nil {
			return n, err
		}
		g.nodes[i].op = ops.LinearPackedOp(pw)
		n++
	}
	return n, nil
}

// prepareConv lays out the constant weights of every conv2d step once, at
// compile time, for its algorithm (ops.PackConvWeights: Winograd's
// transformed and packed filters, or the channels-last kernels' order), so
// no call transforms them again; a convolution whose algorithm reads the
// weights as given is left as it is.
func prepareConv(g *Graph) (int, error) {
	n := 0
	for i, nd := range g.nodes {
		if nd.op.Name() != "conv2d" || len(nd.in) < 2 || g.values[nd.in[1]].kind != kindConst {
			continue
		}
		at, ok := nd.op.(ops.Attributed)
		if !ok {
			continue
		}
		a, ok := at.Attrs().(ops.Conv2DAttrs)
		if !ok {
			continue
		}
		p, err := ops.PackConvWeights(g.values[nd.in[1]].c, a)
		if err != nil {
			return n, err
		}
		if p != nil {
			g.nodes[i].op = ops.Conv2DPackedOp(a, p)
			n++
		}
	}
	return n, nil
}
