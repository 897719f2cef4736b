package ops

import (
	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/tensor"
)

// PackRecurrentWeights returns a copy of op, a recurrent op (lstm,
// lstm_projected, lstm_cell, gru or gru_cell), that multiplies by its
// input and recurrent kernels W and U packed once here into the GEMM's
// panel layout (PackWeights) instead of at every call, and true; or op
// itself and false when op is another op or none of its kernels is given.
// consts holds the op's inputs in order, nil for each one that is not a
// constant: an inference plan calls it at compile time with its constant
// tensors (ONNX Runtime prepacks its LSTM and GRU weights at session
// creation the same way). The copy uses a packing only while the tensor it
// packed is the one a call passes, and gives the op's results bit for bit;
// the packing is a copy, so a later change to that tensor is not seen.
// A GRU without reset_after multiplies U as two column blocks, packed apart.
func PackRecurrentWeights(op Op, consts []*tensor.Tensor) (Op, bool, error) {
	pack := func(t *tensor.Tensor) (*PackedWeights, error) {
		if t == nil || t.Rank() != 2 || t.Storage() != nil || !t.DType().IsFloat() {
			return nil, nil
		}
		return PackWeights(t)
	}
	switch o := op.(type) {
	case *lstmOp:
		if n := len(consts); o.name == "lstm" && (n < 4 || n > 7) || o.name == "lstm_projected" && n != 3 && n != 4 ||
			o.name == "lstm_cell" && n != 6 && n != 7 {
			return op, false, nil // Forward names the miscount
		}
		r := o.roles(consts)
		pw, err := pack(r.w)
		if err != nil {
			return op, false, err
		}
		pu, err := pack(r.u)
		if err != nil || pw == nil && pu == nil {
			return op, false, err
		}
		c := *o
		c.pw, c.pu, c.s, c.act = pw, pu, nil, nil
		return &c, true, nil
	case *gruOp:
		if n := len(consts); o.name == "gru_cell" && n != 5 || o.name == "gru" && n != 4 && n != 5 {
			return op, false, nil // Forward names the miscount
		}
		r := o.roles(consts)
		pw, err := pack(r.w)
		if err != nil {
			return op, false, err
		}
		var pu *PackedWeights
		var blocks *gruBlocks
		if o.attrs.ResetAfter {
			if pu, err = pack(r.u); err != nil {
				return op, false, err
			}
		} else if r.u != nil && r.u.DType().IsFloat() {
			blocks = packGRUBlocks(r.u)
		}
		if pw == nil && pu == nil && blocks == nil {
			return op, false, nil
		}
		c := *o
		c.pw, c.pu, c.blocks, c.s, c.act, c.rech = pw, pu, blocks, nil, nil, nil
		return &c, true, nil
	}
	return op, false, nil
}

// gruBlocks is the recurrent kernel U [H, 3H] of a GRU without
// reset_after, packed once as the two column blocks its steps multiply
// apart: [Uz Ur] (the first 2H columns), then Uh (the last H).
type gruBlocks struct {
	u         *tensor.Tensor
	zr32, h32 *gemm.PackedB[float32]
	zr64, h64 *gemm.PackedB[float64]
}

// packGRUBlocks packs u [H, 3H], or returns nil for another shape.
func packGRUBlocks(u *tensor.Tensor) *gruBlocks {
	if u == nil || u.Rank() != 2 || u.Dim(1) != 3*u.Dim(0) || u.Storage() != nil {
		return nil
	}
	h, p := u.Dim(0), &gruBlocks{u: u}
	switch u.DType() {
	case tensor.Float32:
		d := u.Float32s()
		p.zr32, p.h32 = gemm.PackB(false, h, 2*h, d, 3*h), gemm.PackB(false, h, h, d[2*h:], 3*h)
	case tensor.Float64:
		d := u.Float64s()
		p.zr64, p.h64 = gemm.PackB(false, h, 2*h, d, 3*h), gemm.PackB(false, h, h, d[2*h:], 3*h)
	default:
		return nil
	}
	return p
}

// gruBlocksAs returns p's packings of u's blocks in element type T, or
// nils when p is nil or packs another tensor (or type).
func gruBlocksAs[T tensor.Float](p *gruBlocks, u *tensor.Tensor) (zr, h *gemm.PackedB[T]) {
	if p == nil || p.u != u {
		return nil, nil
	}
	var z T
	switch any(z).(type) {
	case float32:
		if p.zr32 != nil {
			return any(p.zr32).(*gemm.PackedB[T]), any(p.h32).(*gemm.PackedB[T])
		}
	case float64:
		if p.zr64 != nil {
			return any(p.zr64).(*gemm.PackedB[T]), any(p.h64).(*gemm.PackedB[T])
		}
	}
	return nil, nil
}
