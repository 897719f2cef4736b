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
