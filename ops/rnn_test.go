package ops

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// The rows of a recurrent step are spread over the cores from a few
// thousand gate units on (par.EachRow); with ragged lengths, initial states
// and peepholes, the LSTM and both GRU forms give the same bits forward
// and backward on one core as on several.
func TestRNNRowsOverCoresMatchOneCore(t *testing.T) {
	const seqs, nIn, h = 80, 5, 96
	off := []int{0}
	for i := range seqs {
		off = append(off, off[i]+(i*7)%5) // lengths 0-4
	}
	total := off[seqs]
	for _, c := range []struct {
		name string
		op   func() Op
		in   []*tensor.Tensor
	}{
		{"lstm", func() Op { return LSTMOp(LSTMAttrs{Offsets: off}) },
			ins(randn(61, total, nIn), randn(62, nIn, 4*h), randn(63, h, 4*h), randn(64, 4*h), randn(65, 3*h), randn(66, seqs, h), randn(67, seqs, h))},
		{"gru_reset_after", func() Op { return GRUOp(GRUAttrs{Offsets: off, ResetAfter: true}) },
			ins(randn(71, total, nIn), randn(72, nIn, 3*h), randn(73, h, 3*h), randn(74, 2, 3*h), randn(75, seqs, h))},
		{"gru_reset_before", func() Op { return GRUOp(GRUAttrs{Offsets: off}) },
			ins(randn(81, total, nIn), randn(82, nIn, 3*h), randn(83, h, 3*h), randn(84, 3*h), randn(85, seqs, h))},
	} {
		for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
			in := c.in
			if dt == tensor.Float32 {
				in = make([]*tensor.Tensor, len(c.in))
				for i, x := range c.in {
					in[i] = f32(x)
				}
			}
			run := func(procs int) []*tensor.Tensor {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				op := c.op()
				y, err := op.Forward(in)
				require.NoError(t, err)
				dy := randn(68, y.Shape()...)
				if dt == tensor.Float32 {
					dy = f32(dy)
				}
				need := make([]bool, len(in))
				for i := range need {
					need[i] = true
				}
				g, err := op.Backward(in, y, dy, need)
				require.NoError(t, err)
				return append([]*tensor.Tensor{y}, g...)
			}
			one, many := run(1), run(4)
			for i := range one {
				require.Equal(t, one[i].Raw(), many[i].Raw(), "%s %v output %d", c.name, dt, i)
			}
		}
	}
}
