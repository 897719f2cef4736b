package ops

import "github.com/plumbml/plumb/tensor"

func init() {
	register(Spec{Name: "lstm_projected", Inputs: []string{"x", "u", "b", "peephole"}, Grads: []int{0, 1, 2, 3},
		Make: MakeOp(LSTMProjectedOp), CUDA: DeviceFallback})
}

// LSTMProjectedOp returns the fused LSTM over a ragged batch whose input
// x [total, 4H] already holds each step's input projections of the four
// gate blocks i, f, c, o: LSTMOp's formulas with x in place of x·W.
// Inputs, in order: x [total, 4H], U [H, 4H], b [4H] and an optional
// peephole [3H]; the output is LSTMOp's [total, 2H] (h', then c').
//
// It is Paddle's dynamic_lstm (fluid.layers.dynamic_lstm, v2's
// lstmemory), whose input is the output of an fc layer of size 4H that
// the model also uses elsewhere (the book's stacked LSTM net pools it and
// feeds it to the next layer), so the projection is not computed twice.
// With attrs.Reverse it runs each sequence from its last step, as
// dynamic_lstm's is_reverse.
func LSTMProjectedOp(attrs LSTMAttrs) Op { return &lstmOp{name: "lstm_projected", attrs: attrs} }

// LSTMProjected runs LSTMProjectedOp; peephole may be nil.
func LSTMProjected(x, u, b, peephole *tensor.Tensor, attrs LSTMAttrs) (*tensor.Tensor, error) {
	if peephole == nil {
		return run(LSTMProjectedOp(attrs), x, u, b)
	}
	return run(LSTMProjectedOp(attrs), x, u, b, peephole)
}
