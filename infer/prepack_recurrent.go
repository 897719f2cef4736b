package infer

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// prepackRecurrent packs the constant kernels of every recurrent step
// (lstm, lstm_projected, lstm_cell, gru, gru_cell) once, at compile time
// (ops.PackRecurrentWeights), so no call packs its recurrent weights
// again: a call of a packed step allocates nothing, and gives the
// unpacked op's results.
func prepackRecurrent(g *Graph) (int, error) {
	n := 0
	var consts []*tensor.Tensor
	for i, nd := range g.nodes {
		switch nd.op.Name() {
		case "lstm", "lstm_projected", "lstm_cell", "gru", "gru_cell":
		default:
			continue
		}
		consts = consts[:0]
		for _, r := range nd.in {
			var c *tensor.Tensor
			if g.values[r].kind == kindConst {
				c = g.values[r].c
			}
			consts = append(consts, c)
		}
		op, ok, err := ops.PackRecurrentWeights(nd.op, consts)
		if err != nil {
			return n, err
		}
		if ok {
			g.nodes[i].op = op
			n++
		}
	}
	return n, nil
}
