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
	register("lstm", func(e *exporter, c call) (*val, error) { return e.lstm(c, false) })
	register("lstm_projected", func(e *exporter, c call) (*val, error) { return e.lstm(c, true) })
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

func (e *exporter) lstm(c call, projected bool) (*val, error) {
	a := c.attrs().(ops.LSTMAttrs)
	x, err := raggedInput(c, a.Offsets)
	if err != nil {
		return nil, err
	}
	// Inputs by role: x, [W], U, b, [peephole].
	rest := c.in[1:]
	restV := c.vs[1:]
	var w *tensor.Tensor
	if !projected {
		w, rest, restV = rest[0], rest[1:], restV[1:]
	}
	if len(rest) > 3 {
		return nil, fmt.Errorf("initial states h0 and c0; expected the zero initial state")
	}
	for _, v := range restV {
		if !v.konst {
			return nil, fmt.Errorf("a weight is computed from the inputs; expected constants")
		}
	}
	if !projected && !c.vs[1].konst {
		return nil, fmt.Errorf("the input kernel is computed from the inputs; expected a constant")
	}
	u, b := rest[0], rest[1]
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
				case projected && m == col:
					wo.SetAt(row*in+m, 1)
				case !projected:
					wo.SetAt(row*in+m, w.At(m*4*h+col))
				}
			}
			for m := range h {
				ro.SetAt(row*h+m, u.At(m*4*h+col))
			}
			bo.SetAt(row, b.At(col))
		}
	}
	names := e.rnnInputs(x, wo, ro, bo)
	if len(rest) == 3 { // peepholes: Plumb's i, f, o to ONNX's i, o, f
		p := rest[2]
		po := tensor.Zeros(dt, 1, 3*h)
		for k, g := range [3]int{0, 2, 1} {
			for j := range h {
				po.SetAt(k*h+j, p.At(g*h+j))
			}
		}
		names = append(names, "", "", e.constant(po))
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
	return &val{seq: x.seq, hc: true, name: e.rnnSteps(y), final: [2]string{yh, yc}, reverse: a.Reverse}, nil
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
// step (after its first with reverse), [batch, width], zeros for an empty
// sequence. Of a fused LSTM's [h, c] rows it is ONNX LSTM's Y_h and Y_c
// side by side, when the LSTM ran in the same direction; of other rows it
// is the last (first) step, as sequence_pool's.
func (e *exporter) rnnFinalState(c call) (*val, error) {
	a := c.attrs().(ops.RNNFinalStateAttrs)
	x, err := raggedInput(c, a.Offsets)
	if err != nil {
		return nil, err
	}
	if len(c.in) > 1 {
		return nil, fmt.Errorf("an initial state; expected the zero initial state")
	}
	if !x.hc {
		pool := ops.SequencePoolLast
		if a.Reverse {
			pool = ops.SequencePoolFirst
		}
		return e.sequencePool(x, pool, 0, c.in[0].Rank()+1, c.in[0].DType())
	}
	if x.reverse != a.Reverse {
		return nil, fmt.Errorf("the final state of the other direction than the LSTM ran (reverse %v, the LSTM's %v); expected the same", a.Reverse, x.reverse)
	}
	h := e.apply("Squeeze", []string{x.final[0], e.ints64(0)})
	cc := e.apply("Squeeze", []string{x.final[1], e.ints64(0)})
	return &val{batch: true, name: e.apply("Concat", []string{h, cc}, attrInt("axis", 1))}, nil
}
