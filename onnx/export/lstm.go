package export

import (
	"fmt"

	"github.com/plumbml/plumb/onnx/internal/pb"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The fused LSTM over a ragged batch (ops.LSTMOp; lstm_projected, whose
// input already holds x·W) as ONNX's LSTM (onnx/docs/Operators.md#LSTM)
// with sequence_lens, on the padded steps transposed to ONNX's [seq,
// batch, ...]. Both compute, per step,
//
//	i = σ(x·Wi + h·Ri + bi + pi∘c)    f = σ(x·Wf + h·Rf + bf + pf∘c)
//	g = act(x·Wc + h·Rc + bc)         c' = f∘c + i∘g
//	o = σ(x·Wo + h·Ro + bo + po∘c')   h' = o∘act'(c')
//
// with Plumb's gate blocks in the order i, f, c, o, as columns of W [In,
// 4H], and ONNX's in the order i, o, f, c, as rows of W [1, 4H, In]; so
// the weights are transposed and their blocks reordered, and the peepholes
// (Plumb's i, f, o; ONNX's i, o, f) likewise. lstm_projected's input is
// the projection itself: its W is the identity with the blocks reordered,
// which the product leaves exact. ONNX's Y holds h' per step; c' only for
// the last step, so the output's c columns are not exported (see
// val.hc). Reverse is ONNX's direction "reverse", which like Plumb runs
// each sequence from its own last step.
func init() {
	register("lstm", func(e *exporter, c call) (*val, error) { return e.lstm(c) })
	register("lstm_projected", func(e *exporter, c call) (*val, error) { return e.lstm(c) })
	register("lstm_cell", func(e *exporter, c call) (*val, error) { return e.lstm(c) })
	register("rnn_final_state", func(e *exporter, c call) (*val, error) { return e.rnnFinalState(c) })
}

// onnxGate is the Plumb gate block of ONNX's block k (i, o, f, c).
var onnxGate = [4]int{0, 3, 1, 2}

// rnnActivation is ONNX's name of a Plumb RNN activation.
func rnnActivation(a ops.RNNActivation) (string, error) {
	switch a {
	case ops.ActTanh:
		return "Tanh", nil
	case ops.ActSigmoid:
		return "Sigmoid", nil
	case ops.ActRelu:
		return "Relu", nil
	}
	return "", fmt.Errorf("activation %v has no ONNX LSTM form; expected tanh, sigmoid or relu", a)
}

// lstmRoles are the positions of an LSTM op's inputs x, W, U, b,
// peephole, h0 and c0 (-1 where left out), by op and input count, as
// ops.lstmOp's roles: the fused op's order is x, W, U, b, [peephole],
// [h0, c0], lstm_projected's x, U, b, [peephole], the cell's x, h, c, W,
// U, b, [peephole].
func lstmRoles(name string, n int) [7]int {
	switch {
	case name == "lstm_projected" && n == 3:
		return [7]int{0, -1, 1, 2, -1, -1, -1}
	case name == "lstm_projected":
		return [7]int{0, -1, 1, 2, 3, -1, -1}
	case name == "lstm_cell" && n == 6:
		return [7]int{0, 3, 4, 5, -1, 1, 2}
	case name == "lstm_cell":
		return [7]int{0, 3, 4, 5, 6, 1, 2}
	case n == 4:
		return [7]int{0, 1, 2, 3, -1, -1, -1}
	case n == 5:
		return [7]int{0, 1, 2, 3, 4, -1, -1}
	case n == 6:
		return [7]int{0, 1, 2, 3, -1, 4, 5}
	}
	return [7]int{0, 1, 2, 3, 4, 5, 6}
}

// lstm writes lstm, lstm_projected (over a ragged batch) or lstm_cell (one
// step of a dense batch: ONNX's LSTM over one step, its Y_h and Y_c side by
// side as the cell's [h', c']).
func (e *exporter) lstm(c call) (*val, error) {
	name := c.op.Name()
	cell := name == "lstm_cell"
	var a ops.LSTMAttrs
	if cell {
		ca := c.attrs().(ops.LSTMCellAttrs)
		a.Candidate, a.Cell = ca.Candidate, ca.Cell
	} else {
		a = c.attrs().(ops.LSTMAttrs)
	}
	r := lstmRoles(name, len(c.in))
	x := c.vs[0]
	if !cell {
		if _, err := raggedInput(c, a.Offsets); err != nil {
			return nil, err
		}
	} else if x.seq != nil || !x.batch {
		return nil, fmt.Errorf("input x is not a dense batch [batch, In]; expected one step of a batch")
	}
	for k := 1; k <= 4; k++ { // W, U, b, peephole
		if r[k] >= 0 && !c.vs[r[k]].konst {
			return nil, fmt.Errorf("input %d, a weight, is computed from the inputs; expected a constant", r[k])
		}
	}
	u, b := c.in[r[2]], c.in[r[3]]
	dt := c.in[0].DType()
	h := u.Dim(0)
	in := c.in[0].Dim(1)
	// W [1, 4H, In]: row (k, j) is Plumb's column (onnxGate[k], j).
	wo := tensor.Zeros(dt, 1, 4*h, in)
	ro := tensor.Zeros(dt, 1, 4*h, h)
	bo := tensor.Zeros(dt, 1, 8*h)
	for k, g := range onnxGate {
		for j := range h {
			row, col := k*h+j, g*h+j
			for m := range in {
				switch {
				case r[1] < 0 && m == col: // lstm_projected: the identity
					wo.SetAt(row*in+m, 1)
				case r[1] >= 0:
					wo.SetAt(row*in+m, c.in[r[1]].At(m*4*h+col))
				}
			}
			for m := range h {
				ro.SetAt(row*h+m, u.At(m*4*h+col))
			}
			bo.SetAt(row, b.At(col))
		}
	}
	var names []string
	if cell {
		names = e.cellInputs(x, wo, ro, bo)
	} else {
		names = e.rnnInputs(x, wo, ro, bo)
	}
	init, err := e.initialStates(c, r[5], r[6])
	if err != nil {
		return nil, err
	}
	names = append(names, init...)
	if r[4] >= 0 { // peepholes: Plumb's i, f, o to ONNX's i, o, f
		p := c.in[r[4]]
		po := tensor.Zeros(dt, 1, 3*h)
		for k, g := range [3]int{0, 2, 1} {
			for j := range h {
				po.SetAt(k*h+j, p.At(g*h+j))
			}
		}
		for len(names) < 7 {
			names = append(names, "")
		}
		names = append(names, e.constant(po))
	}
	attrs := []*pb.AttributeProto{attrInt("hidden_size", int64(h))}
	if a.Reverse {
		attrs = append(attrs, attrString("direction", "reverse"))
	}
	if a.Candidate != ops.ActTanh || a.Cell != ops.ActTanh {
		g, err := rnnActivation(a.Candidate)
		if err != nil {
			return nil, err
		}
		hAct, err := rnnActivation(a.Cell)
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, attrStrings("activations", "Sigmoid", g, hAct))
	}
	y, yh, yc := e.fresh(), e.fresh(), e.fresh()
	e.node("LSTM", names, []string{y, yh, yc}, attrs...)
	if cell { // [h', c'] of the one step
		hh := e.apply("Squeeze", []string{yh, e.ints64(0)})
		cc := e.apply("Squeeze", []string{yc, e.ints64(0)})
		return &val{batch: true, name: e.apply("Concat", []string{hh, cc}, attrInt("axis", 1))}, nil
	}
	return &val{seq: x.seq, hc: true, name: e.rnnSteps(y), final: [2]string{yh, yc}, reverse: a.Reverse}, nil
}

// initialStates returns ONNX's initial_h and initial_c inputs ([1, batch,
// H]) from the inputs at positions ih and ic (-1: none, "" for ONNX's
// zeros); ic < 0 gives initial_h alone (a GRU's).
func (e *exporter) initialStates(c call, ih, ic int) ([]string, error) {
	if ih < 0 {
		return []string{"", ""}, nil
	}
	var out []string
	for _, i := range []int{ih, ic} {
		if i < 0 {
			continue
		}
		if v := c.vs[i]; !v.batch || v.seq != nil {
			return nil, fmt.Errorf("input %d, an initial state %v%v, is not computed from a dense batch input; expected [batch, H] rows of the batch, since the exported batch size is symbolic", i, c.in[i].DType(), c.in[i].Shape())
		}
		out = append(out, e.apply("Unsqueeze", []string{c.vs[i].name, e.ints64(0)}))
	}
	return out, nil
}

// cellInputs are an ONNX LSTM's or GRU's first five inputs for one step of
// a dense batch x [batch, In]: X [1, batch, In], W, R, B, and no
// sequence_lens.
func (e *exporter) cellInputs(x *val, w, r, b *tensor.Tensor) []string {
	return []string{e.apply("Unsqueeze", []string{x.name, e.ints64(0)}), e.constant(w), e.constant(r), e.constant(b), ""}
}

// rnnInputs are an ONNX LSTM's or GRU's first five inputs: X, the padded
// steps transposed to [seq, batch, ...], the weights W, R and B, and
// sequence_lens, the lengths as INT32 (one Cast per ragged input).
func (e *exporter) rnnInputs(x *val, w, r, b *tensor.Tensor) []string {
	return []string{e.apply("Transpose", []string{x.name}, attrInts("perm", 1, 0, 2)), e.constant(w), e.constant(r), e.constant(b),
		e.derive(x.seq, "lengths32", func() string {
			return e.apply("Cast", []string{x.seq.lengths}, attrInt("to", int64(pb.TensorProto_INT32)))
		})}
}

// rnnSteps turns an ONNX LSTM's or GRU's Y [seq, 1, batch, H] into the
// padded rows [batch, seq, H].
func (e *exporter) rnnSteps(y string) string {
	y = e.apply("Squeeze", []string{y, e.ints64(1)})
	return e.apply("Transpose", []string{y}, attrInts("perm", 1, 0, 2))
}

// rnnFinalState is rnn_final_state: each sequence's state after its last
// step (after its first with reverse), [batch, width], the initial state
// (zeros without one) for an empty sequence. Of a fused LSTM's [h, c] rows it is ONNX LSTM's Y_h and Y_c
// side by side, when the LSTM ran in the same direction; of other rows it
// is the last (first) step, as sequence_pool's.
func (e *exporter) rnnFinalState(c call) (*val, error) {
	a := c.attrs().(ops.RNNFinalStateAttrs)
	x, err := raggedInput(c, a.Offsets)
	if err != nil {
		return nil, err
	}
	if !x.hc {
		pool := ops.SequencePoolLast
		if a.Reverse {
			pool = ops.SequencePoolFirst
		}
		y, err := e.sequencePool(x, pool, 0, c.in[0].Rank()+1, c.in[0].DType())
		if err != nil || len(c.in) == 1 {
			return y, err
		}
		// An empty sequence's final state is the initial one.
		if v := c.vs[1]; !v.batch || v.seq != nil {
			return nil, fmt.Errorf("the initial state is not computed from a dense batch input; expected [batch, H] rows of the batch")
		}
		return &val{batch: true, name: e.apply("Where", []string{e.nonEmpty(x.seq, c.in[0].Rank()), y.name, c.vs[1].name})}, nil
	}
	if x.reverse != a.Reverse {
		return nil, fmt.Errorf("the final state of the other direction than the LSTM ran (reverse %v, the LSTM's %v); expected the same", a.Reverse, x.reverse)
	}
	h := e.apply("Squeeze", []string{x.final[0], e.ints64(0)})
	cc := e.apply("Squeeze", []string{x.final[1], e.ints64(0)})
	y := e.apply("Concat", []string{h, cc}, attrInt("axis", 1))
	if len(c.in) == 1 {
		return &val{batch: true, name: y}, nil
	}
	// An empty sequence's final state is the initial one; ONNX Runtime's
	// Y_h and Y_c for a sequence_lens of 0 are not, so say it outright.
	if v := c.vs[1]; !v.batch || v.seq != nil {
		return nil, fmt.Errorf("the initial state is not computed from a dense batch input; expected [batch, 2H] rows of the batch")
	}
	return &val{batch: true, name: e.apply("Where", []string{e.nonEmpty(x.seq, 2), y, c.vs[1].name})}, nil
}
