package export

import (
	"fmt"

	"github.com/plumbml/plumb/onnx/internal/pb"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The fused GRU over a ragged batch (ops.GRUOp) as ONNX's GRU
// (onnx/docs/Operators.md#GRU) with sequence_lens. Both order the gate
// blocks z, r, h̃ and compute h' = (1-z)∘h̃ + z∘h; Plumb's W [In, 3H] and
// U [H, 3H] are ONNX's W [1, 3H, In] and R [1, 3H, H] transposed. Keras'
// reset_after form (ResetAfter: the reset gate applied to h·Uh + b'h,
// separate input and recurrent biases, b [2, 3H]) is ONNX's
// linear_before_reset 1 with Wb and Rb the two bias rows; the original
// form (b [3H]) is linear_before_reset 0 with Wb = b and Rb = 0. The
// output is Y, each step's h'; rnn_final_state of it is the last (first,
// reversed) step (see rnnFinalState).
func init() {
	register("gru", func(e *exporter, c call) (*val, error) { return e.gru(c) })
	register("gru_cell", func(e *exporter, c call) (*val, error) { return e.gru(c) })
}

// gru writes gru (over a ragged batch; inputs x, W, U, b, [h0]) or
// gru_cell (one step of a dense batch; x, h, W, U, b: ONNX's GRU over one
// step from initial_h h, its Y_h the cell's h').
func (e *exporter) gru(c call) (*val, error) {
	cell := c.op.Name() == "gru_cell"
	var a ops.GRUAttrs
	x, wi, hi := c.vs[0], 1, 4 // positions of W and h0 (h0 past the end when absent)
	if cell {
		a.ResetAfter = c.attrs().(ops.GRUCellAttrs).ResetAfter
		wi, hi = 2, 1
		if x.seq != nil || !x.batch {
			return nil, fmt.Errorf("input x is not a dense batch [batch, In]; expected one step of a batch")
		}
	} else {
		a = c.attrs().(ops.GRUAttrs)
		if _, err := raggedInput(c, a.Offsets); err != nil {
			return nil, err
		}
	}
	if hi >= len(c.in) {
		hi = -1
	}
	for i := wi; i < wi+3; i++ {
		if !c.vs[i].konst {
			return nil, fmt.Errorf("input %d, a weight, is computed from the inputs; expected a constant", i)
		}
	}
	w, u, b := c.in[wi], c.in[wi+1], c.in[wi+2]
	dt, in, h := c.in[0].DType(), w.Dim(0), u.Dim(0)
	wo, ro, bo := tensor.Zeros(dt, 1, 3*h, in), tensor.Zeros(dt, 1, 3*h, h), tensor.Zeros(dt, 1, 6*h)
	for row := range 3 * h {
		for m := range in {
			wo.SetAt(row*in+m, w.At(m*3*h+row))
		}
		for m := range h {
			ro.SetAt(row*h+m, u.At(m*3*h+row))
		}
	}
	for i := range b.Size() { // [3H] is Wb; [2, 3H] is Wb then Rb, ONNX's B layout
		bo.SetAt(i, b.At(i))
	}
	attrs := []*pb.AttributeProto{attrInt("hidden_size", int64(h)), attrInt("linear_before_reset", int64(b2i(a.ResetAfter)))}
	if a.Reverse {
		attrs = append(attrs, attrString("direction", "reverse"))
	}
	var names []string
	if cell {
		names = e.cellInputs(x, wo, ro, bo)
	} else {
		names = e.rnnInputs(x, wo, ro, bo)
	}
	init, err := e.initialStates(c, hi, -1)
	if err != nil {
		return nil, err
	}
	y, yh := e.fresh(), e.fresh()
	e.node("GRU", append(names, init[0]), []string{y, yh}, attrs...)
	if cell {
		return &val{batch: true, name: e.apply("Squeeze", []string{yh, e.ints64(0)})}, nil
	}
	return &val{seq: x.seq, name: e.rnnSteps(y)}, nil
}
