package run

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX LSTM (Operators.md, LSTM-14: gates i, o, f, c in W [dirs, 4H, in],
// R [dirs, 4H, H], B [dirs, 8H] = Wb then Rb, peepholes P [dirs, 3H] as
// i, o, f; optional sequence_lens, initial_h and initial_c) on
// ops.LSTM, whose formulas are the same with the gate blocks in the order
// i, f, c, o, W laid out [in, 4H], one bias (Wb + Rb) and peepholes i, f,
// o. Weights must be constants: they are laid out once, at compile time.
// Sequences run ragged (sequence_lens are the ragged batch's lengths);
// Y is zero at padded steps and Y_h, Y_c are each sequence's last state,
// as ONNX specifies. Each direction of a bidirectional LSTM is one fused
// op (the reverse one with Reverse).
func init() {
	register("LSTM", opDef{compile: compileLSTM})
}

// lstmOrder takes ONNX's gate blocks (i, o, f, c) to Plumb's (i, f, c, o).
var lstmOrder = []int{0, 2, 3, 1}

func compileLSTM(c *ctx) (kernel, error) {
	if err := c.arity(3, 8, 3); err != nil {
		return nil, err
	}
	r, err := c.readRNN([]string{"Sigmoid", "Tanh", "Tanh"}, "input_forget")
	if err != nil {
		return nil, err
	}
	if v, err := c.n.intAttr("input_forget", 0); err != nil || v != 0 {
		if err != nil {
			return nil, err
		}
		return nil, c.n.errorf("input_forget %d is not supported; expected 0", v)
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	if err := c.sameElem(0, 1, 2, 3, 5, 6, 7); err != nil {
		return nil, err
	}
	if err := c.rnnShapes(r, 4); err != nil {
		return nil, err
	}
	h := r.hidden
	type dirWeights struct{ w, u, b, p *tensor.Tensor }
	dw := make([]dirWeights, r.dirs)
	for i, name := range []string{"W", "R"} {
		if c.in[1+i].konst == nil {
			return nil, c.n.errorf("input %d %q (%s) is computed at run time; expected constant weights", 1+i, c.n.Inputs[1+i], name)
		}
	}
	if c.has(3) && c.in[3].konst == nil || c.has(7) && c.in[7].konst == nil {
		return nil, c.n.errorf("B or P is computed at run time; expected constant weights")
	}
	for d := range r.dirs {
		var err error
		if dw[d].w, err = weightBlocks(c.in[1].konst, d, h, lstmOrder); err != nil {
			return nil, c.n.wrap(err)
		}
		if dw[d].u, err = weightBlocks(c.in[2].konst, d, h, lstmOrder); err != nil {
			return nil, c.n.wrap(err)
		}
		dt := c.in[1].konst.DType()
		bias := tensor.Zeros(dt, 4*h)
		if c.has(3) {
			bd, err := c.in[3].konst.Slice(0, d, d+1)
			if err != nil {
				return nil, c.n.wrap(err)
			}
			bd, _ = bd.Reshape(8 * h)
			wb, _ := bd.Slice(0, 0, 4*h)
			rb, _ := bd.Slice(0, 4*h, 8*h)
			if bias, err = ops.Add(wb, rb); err != nil {
				return nil, c.n.wrap(err)
			}
		}
		if dw[d].b, err = vectorBlocks(bias, h, lstmOrder); err != nil {
			return nil, c.n.wrap(err)
		}
		if c.has(7) {
			pd, err := c.in[7].konst.Slice(0, d, d+1)
			if err != nil {
				return nil, c.n.wrap(err)
			}
			if pd, err = pd.Reshape(3 * h); err != nil {
				return nil, c.n.errorf("P is %v; expected [%d, %d]", c.in[7].konst.Shape(), r.dirs, 3*h)
			}
			if dw[d].p, err = vectorBlocks(pd, h, []int{0, 2, 1}); err != nil {
				return nil, c.n.wrap(err)
			}
		}
	}
	return func(in []*tensor.Tensor) ([]*tensor.Tensor, error) {
		opt := func(i int) *tensor.Tensor {
			if i < len(in) {
				return in[i]
			}
			return nil
		}
		x, err := transposeInput(in[0], r.batchFirst)
		if err != nil {
			return nil, err
		}
		b, err := pack(x, opt(4))
		if err != nil {
			return nil, err
		}
		y := newTensor(x.DType(), []int{b.seq, r.dirs, b.batch, h})
		hs := make([]*tensor.Tensor, r.dirs)
		cs := make([]*tensor.Tensor, r.dirs)
		for d := range r.dirs {
			h0, err := stateOf(opt(5), d, r.batchFirst)
			if err != nil {
				return nil, err
			}
			c0, err := stateOf(opt(6), d, r.batchFirst)
			if err != nil {
				return nil, err
			}
			if (h0 == nil) != (c0 == nil) {
				zero := tensor.Zeros(x.DType(), b.batch, h)
				if h0 == nil {
					h0 = zero
				} else {
					c0 = zero
				}
			}
			reverse := d == 1 || r.reverse
			states, err := ops.LSTM(b.x, dw[d].w, dw[d].u, dw[d].b, dw[d].p, h0, c0, ops.LSTMAttrs{Offsets: b.offsets, Reverse: reverse})
			if err != nil {
				return nil, err
			}
			hs[d] = b.unpack(states, 0, h, d, r.dirs, reverse, y, h0)
			cs[d] = b.unpack(states, h, h, d, r.dirs, reverse, nil, c0)
		}
		yh, err := stackDirs(hs)
		if err != nil {
			return nil, err
		}
		yc, err := stackDirs(cs)
		if err != nil {
			return nil, err
		}
		return finishY(y, []*tensor.Tensor{yh, yc}, r.batchFirst)
	}, nil
}
