package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "gru_cell", Inputs: []string{"x", "h", "w", "u", "b"}, Grads: []int{0, 1, 2, 3, 4},
		Make: MakeOp(func(a GRUCellAttrs) Op { return GRUCellOp(a.ResetAfter) }), CUDA: DeviceKernel})
}

// GRUCellAttrs are gru_cell's attributes (see GRUAttrs.ResetAfter).
type GRUCellAttrs struct {
	ResetAfter bool `json:"reset_after"`
}

// GRUCellOp returns one GRU step for a batch (Keras GRUCell; the formulas,
// gate order z, r, h̃ and both reset_after forms are GRUOp's). Inputs, in
// order: x [B, In], h [B, H], W [In, 3H], U [H, 3H] and b ([2, 3H] with
// resetAfter, else [3H]). The output is the new h [B, H].
//
// It is the fused GRU run over B one-step sequences with initial state h.
func GRUCellOp(resetAfter bool) Op {
	return &gruOp{name: "gru_cell", attrs: GRUAttrs{ResetAfter: resetAfter}}
}

// GRUCellPackedOp returns GRUCellOp taking W, and with resetAfter U, from
// packings made once (PackWeights) when its W and U inputs are the packed
// tensors, for a decoder stepping with unchanged weights (a beam search);
// either may be nil. The results are GRUCellOp's.
func GRUCellPackedOp(resetAfter bool, w, u *PackedWeights) Op {
	o := &gruOp{name: "gru_cell", attrs: GRUAttrs{ResetAfter: resetAfter}, pw: w}
	if resetAfter {
		o.pu = u
	}
	return o
}

// GRUCell returns one GRU step's h'; see GRUCellOp.
func GRUCell(x, h, w, u, b *tensor.Tensor, resetAfter bool) (*tensor.Tensor, error) {
	return run(GRUCellOp(resetAfter), x, h, w, u, b)
}
