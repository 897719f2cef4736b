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
	register("gru", func(e *exporter, c call) (*val, error) {
		a := c.attrs().(ops.GRUAttrs)
		x, err := raggedInput(c, a.Offsets)
		if err != nil {
			return nil, err
		}
		if len(c.in) > 4 {
			return nil, fmt.Errorf("an initial state h0; expected the zero initial state")
		}
		for _, v := range c.vs[1:] {
			if !v.konst {
				return nil, fmt.Errorf("a weight is computed from the inputs; expected constants")
			}
		}
		w, u, b := c.in[1], c.in[2], c.in[3]
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
		y := e.apply("GRU", e.rnnInputs(x, wo, ro, bo), attrs...)
		return &val{seq: x.seq, name: e.rnnSteps(y)}, nil
	})
}
