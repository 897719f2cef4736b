package ops

import (
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "lstm_cell", Inputs: []string{"x", "h", "c", "w", "u", "b", "peephole"}, Grads: []int{0, 1, 2, 3, 4, 5, 6},
		Make: MakeOp(func(a LSTMCellAttrs) Op { return LSTMCellActsOp(a.Candidate, a.Cell) }), CUDA: DeviceKernel})
}

// LSTMCellAttrs are lstm_cell's attributes (see LSTMAttrs).
type LSTMCellAttrs struct {
	Candidate RNNActivation `json:"-"`
	Cell      RNNActivation `json:"-"`
}

// LSTMCellOp returns one LSTM step for a batch (Keras LSTMCell; the
// formula, gate order i, f, c (g), o and peepholes are LSTMOp's). Inputs,
// in order: x [B, In], h [B, H], c [B, H], W [In, 4H], U [H, 4H], b [4H]
// and an optional peephole [3H] (i, f, o). The output is [B, 2H]: the new
// h in columns [0, H), the new c in [H, 2H).
//
// It is the fused LSTM run over B sequences of one step each with initial
// state (h, c), so a decoder stepping the cell computes exactly what the
// fused op computes over the whole sequence.
func LSTMCellOp() Op { return &lstmOp{name: "lstm_cell"} }

// LSTMCellActsOp is LSTMCellOp with the candidate and cell activations
// of LSTMAttrs (tanh for the zero value).
func LSTMCellActsOp(candidate, cell RNNActivation) Op {
	return &lstmOp{name: "lstm_cell", attrs: LSTMAttrs{Candidate: candidate, Cell: cell}}
}

// LSTMCell returns one LSTM step's concat(h', c'); peephole may be nil.
func LSTMCell(x, h, c, w, u, b, peephole *tensor.Tensor) (*tensor.Tensor, error) {
	if peephole == nil {
		return run(LSTMCellOp(), x, h, c, w, u, b)
	}
	return run(LSTMCellOp(), x, h, c, w, u, b, peephole)
}
