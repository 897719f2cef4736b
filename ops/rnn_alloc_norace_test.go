//go:build !race

// The race detector makes sync.Pool drop items at random, so allocation
// counts mean nothing under -race; this file is built without it.

package ops

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// With its kernels packed, a recurrent op's ForwardInto allocates nothing
// once warm, on one core and on two: its schedule and pass state come from
// pools, and it hands its runs and rows to the cores through par.Run.
func TestRecurrentForwardIntoAllocatesNothing(t *testing.T) {
	many := []int{0}
	for i := range 15 { // 15 sequences: not split, rows spread over the cores at H 300
		many = append(many, many[i]+1+i%4)
	}
	cases := append(packedRNNCases(),
		packedRNNCase{name: "lstm_rows_over_cores", op: func() Op { return LSTMOp(LSTMAttrs{Offsets: many}) },
			in: ins(randn(40, many[15], 4), randn(41, 4, 4*300), randn(42, 300, 4*300), randn(43, 4*300))})
	for _, c := range cases {
		for _, procs := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/procs%d", c.name, procs), func(t *testing.T) {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
				in := make([]*tensor.Tensor, len(c.in))
				for i, x := range c.in {
					in[i] = f32(x)
				}
				op, ok, err := PackRecurrentWeights(c.op(), in)
				require.NoError(t, err)
				require.True(t, ok)
				y, err := op.Forward(in)
				require.NoError(t, err)
				into := tensor.ZerosLike(y)
				run := func() { require.NoError(t, op.(Into).ForwardInto(into, in)) }
				run()
				assert.Zero(t, testing.AllocsPerRun(20, run))
			})
		}
	}
}
