package infer

import "fmt"

// recurrentProjections says, for Explain, where each recurrent step's
// input projection x·W runs. It is already hoisted over the whole
// sequence, so the plan has no pass for it: lstm and gru multiply all
// T·B rows of x by W in one GEMM before their recurrence (the step loop
// then adds only h·U), and lstm_projected takes x·W from the op before
// it, a linear or linear_concat over all rows (the book's stacked LSTM:
// fc then dynamic_lstm, as Paddle Fluid builds it). A cell op
// (lstm_cell, gru_cell) is one time step of a loop the model runs, whose
// next input may depend on this step's output (a decoder), so there is
// nothing to hoist.
func recurrentProjections(g *Graph) []string {
	var notes []string
	dims := func(r Ref) []int { return g.values[r].shape }
	for i, n := range g.nodes {
		name := n.op.Name()
		switch {
		case (name == "lstm" || name == "gru") && len(n.in) > 1 && len(dims(n.in[0])) == 2 && len(dims(n.in[1])) == 2:
			x, w := dims(n.in[0]), dims(n.in[1])
			notes = append(notes, fmt.Sprintf("step %d %s: x·W for all %d rows in one [%d×%d]·[%d×%d] GEMM inside the op, before the recurrence",
				i, name, x[0], x[0], x[1], w[0], w[1]))
		case name == "lstm_projected" && len(dims(n.in[0])) == 2:
			x := dims(n.in[0])
			from := "the plan's input"
			if p := g.producer(n.in[0]); p >= 0 {
				from = fmt.Sprintf("step %d %s", p, g.nodes[p].op.Name())
			}
			notes = append(notes, fmt.Sprintf("step %d lstm_projected: x·W [%d×%d] for all %d rows computed by %s, one product over the sequence",
				i, x[0], x[1], x[0], from))
		case name == "lstm_cell" || name == "gru_cell":
			notes = append(notes, fmt.Sprintf("step %d %s: one time step of the model's own loop; nothing to hoist", i, name))
		}
	}
	return notes
}
