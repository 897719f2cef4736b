//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation
// counts mean nothing under -race; this file is built without it.

package infer_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// A plan of recurrent steps whose kernels are constants packs them at
// Compile ("recurrent weights prepacked"), gives the ops' own results bit
// for bit, and then runs them with no allocation per call, on one core and
// on two: the LSTM (a batch of 20 that splits over the cores), the
// projected LSTM and both GRU forms, ragged and reversed.
func TestRecurrentPlanPacksAndAllocatesNothing(t *testing.T) {
	off := []int{0}
	for i := range 20 {
		off = append(off, off[i]+1+(i*5)%9)
	}
	total := off[20]
	const in, h = 6, 24
	x := randInput(t, 1, total, in)
	for _, c := range []struct {
		name   string
		op     ops.Op
		x      *tensor.Tensor
		consts []*tensor.Tensor
	}{
		{"lstm", ops.LSTMOp(ops.LSTMAttrs{Offsets: off}), x,
			[]*tensor.Tensor{randInput(t, 2, in, 4*h), randInput(t, 3, h, 4*h), randInput(t, 4, 4*h)}},
		{"lstm_projected", ops.LSTMProjectedOp(ops.LSTMAttrs{Offsets: off, Reverse: true}), randInput(t, 5, total, 4*h),
			[]*tensor.Tensor{randInput(t, 6, h, 4*h), randInput(t, 7, 4*h)}},
		{"gru_reset_after", ops.GRUOp(ops.GRUAttrs{Offsets: off, ResetAfter: true}), x,
			[]*tensor.Tensor{randInput(t, 8, in, 3*h), randInput(t, 9, h, 3*h), randInput(t, 10, 2, 3*h)}},
		{"gru_reset_before", ops.GRUOp(ops.GRUAttrs{Offsets: off, Reverse: true}), x,
			[]*tensor.Tensor{randInput(t, 11, in, 3*h), randInput(t, 12, h, 3*h), randInput(t, 13, 3*h)}},
	} {
		for _, procs := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/procs%d", c.name, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				b := infer.NewBuilder()
				refs := []infer.Ref{b.Input(tensor.Float32, c.x.Shape()...)}
				for _, k := range c.consts {
					refs = append(refs, b.Const(k))
				}
				g, err := b.Graph(b.Op(c.op, refs...))
				require.NoError(t, err)
				p, err := g.Compile(infer.Options{})
				require.NoError(t, err)
				var explain strings.Builder
				require.NoError(t, p.Explain(&explain))
				require.Contains(t, explain.String(), "recurrent weights prepacked")
				require.Empty(t, p.Fallbacks())

				want, err := c.op.Forward(append([]*tensor.Tensor{c.x}, c.consts...))
				require.NoError(t, err)
				out := tensor.Empty(tensor.Float32, want.Shape()...)
				require.NoError(t, p.Run(out, c.x))
				require.Equal(t, want.Float32s(), out.Float32s())
				require.Zero(t, testing.AllocsPerRun(20, func() {
					if err := p.Run(out, c.x); err != nil {
						t.Fatal(err)
					}
				}))
			})
		}
	}
}
