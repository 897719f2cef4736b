package run

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// ONNX GRU (Operators.md, GRU-14: gates z, r, h in W [dirs, 3H, in],
// R [dirs, 3H, H], B [dirs, 6H] = Wb then Rb; optional sequence_lens and
// initial_h) on ops.GRU, whose gate blocks are in the same order with W
// laid out [in, 3H]. linear_before_reset 1 (PyTorch's form) is ops' ResetAfter
// with the bias rows (Wb, Rb); 0 is the original form, whose one bias is
// Wb + Rb. Weights must be constants; sequences run ragged as for LSTM.
func init() {
	register("GRU", opDef{compile: compileGRU})
}

func compileGRU(c *ctx) (kernel, error) {
	if err := c.arity(3, 6, 2); err != nil {
		return nil, err
	}
	r, err := c.readRNN([]string{"Sigmoid", "Tanh"}, "linear_before_reset")
	if err != nil {
		return nil, err
	}
	lbr, err := c.n.intAttr("linear_before_reset", 0)
	if err != nil {
		return nil, err
	}
	if err := c.float(0); err != nil {
		return nil, err
	}
	if err := c.sameElem(0, 1, 2, 3, 5); err != nil {
		return nil, err
	}
	if err := c.rnnShapes(r, 3); err != nil {
		return nil, err
	}
	if c.in[1].konst == nil || c.in[2].konst == nil || c.has(3) && c.in[3].konst == nil {
		return nil, c.n.errorf("W, R or B is computed at run time; expected constant weights")
	}
	h := r.hidden
	order := []int{0, 1, 2}
	type dirWeights struct{ w, u, b *tensor.Tensor }
	dw := make([]dirWeights, r.dirs)
	for d := range r.dirs {
		var err error
		if dw[d].w, err = weightBlocks(c.in[1].konst, d, h, order); err != nil {
			return nil, c.n.wrap(err)
		}
		if dw[d].u, err = weightBlocks(c.in[2].konst, d, h, order); err != nil {
			return nil, c.n.wrap(err)
		}
		bd := tensor.Zeros(c.in[1].konst.DType(), 6*h)
		if c.has(3) {
			if bd, err = c.in[3].konst.Slice(0, d, d+1); err != nil {
				return nil, c.n.wrap(err)
			}
		}
		if lbr != 0 {
			dw[d].b, err = bd.Reshape(2, 3*h)
		} else {
			bd, _ = bd.Reshape(6 * h)
			wb, _ := bd.Slice(0, 0, 3*h)
			rb, _ := bd.Slice(0, 3*h, 6*h)
			dw[d].b, err = ops.Add(wb, rb)
		}
		if err != nil {
			return nil, c.n.wrap(err)
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
		for d := range r.dirs {
			h0, err := stateOf(opt(5), d, r.batchFirst)
			if err != nil {
				return nil, err
			}
			reverse := d == 1 || r.reverse
			states, err := ops.GRU(b.x, dw[d].w, dw[d].u, dw[d].b, h0, ops.GRUAttrs{Offsets: b.offsets, Reverse: reverse, ResetAfter: lbr != 0})
			if err != nil {
				return nil, err
			}
			hs[d] = b.unpack(states, 0, h, d, r.dirs, reverse, y, h0)
		}
		yh, err := stackDirs(hs)
		if err != nil {
			return nil, err
		}
		return finishY(y, []*tensor.Tensor{yh}, r.batchFirst)
	}, nil
}
