package infer

// pass is one rewrite of a graph; run returns how many places it changed.
type pass struct {
	name string
	run  func(g *Graph) (int, error)
}

// passes returns the passes Compile runs, in order.
func passes(opts Options) []pass {
	ps := []pass{{"batch norm as scale and shift", lowerBatchNorm}}
	if !opts.NoFusion {
		ps = append(ps, pass{"transposes and copies absorbed", absorbCopies},
			pass{"batch norm folded into conv/linear", foldAffine},
			pass{"batch norm folded into the unpadded conv after it", foldAffineForward},
			pass{"consecutive linear layers folded into one", foldLinearChains})
	}
	if opts.Dynamic != nil {
		ps = append(ps, dynamicPass(opts.Dynamic))
	}
	ps = append(ps, pass{"linear weights prepacked", prepackLinear}, pass{"conv weights prepared", prepareConv},
		pass{"recurrent weights prepacked", prepackRecurrent})
	if !opts.NoFusion {
		ps = append(ps, pass{"bias, residual and activation epilogues", fuseEpilogues})
		ps = append(ps, pass{"sequence pools and their concat as one op", fuseSeqPoolConcat})
		ps = append(ps, pass{"elementwise chains as one loop", fuseChains})
	}
	return ps
}

// pruned returns g without the nodes whose outputs nothing reads and no
// output is (what a fused node replaced).
func (g *Graph) pruned() *Graph {
	live := make([]bool, len(g.values))
	for _, r := range g.outputs {
		live[r] = true
	}
	keep := make([]bool, len(g.nodes))
	for i := len(g.nodes) - 1; i >= 0; i-- {
		n := g.nodes[i]
		if !live[n.out] {
			continue
		}
		keep[i] = true
		for _, r := range n.in {
			live[r] = true
		}
	}
	h := g.clone()
	h.nodes = h.nodes[:0]
	for i, n := range g.nodes {
		if keep[i] {
			h.nodes = append(h.nodes, n)
		}
	}
	return h
}
