//go:build cuda

package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// raggedOffsets are the ragged batches of the sequence tests: empty
// sequences first, inside and last, a lone empty sequence, one step, and a
// sequence longer than a block.
var raggedOffsets = [][]int{{0, 3, 3, 4, 9}, {0, 0}, {0, 1}, {0, 0, 5, 5, 12, 13, 13}, {0, 1029, 1046}}

// runRows checks a SequenceRows op against its CPU op on x.
func runRows(t *testing.T, rng *rand.Rand, cpu ops.Op, gpu *sequenceRowsLauncher, x *tensor.Tensor) {
	t.Helper()
	out, err := cpu.Forward([]*tensor.Tensor{x})
	require.NoError(t, err)
	gout := randn(t, rng, out.Shape()...)
	grads, err := cpu.Backward([]*tensor.Tensor{x}, out, gout, []bool{true})
	require.NoError(t, err)
	y, err := gpu.Forward(up(t, x))
	require.NoError(t, err)
	defer y.Free()
	requireClose(t, out, y, tolExact, "forward")
	dx, err := gpu.Backward(up(t, gout))
	require.NoError(t, err)
	defer dx.Free()
	requireClose(t, grads[0], dx, tolExact, "backward")
}

func TestSequenceRows(t *testing.T) {
	rng := tensor.NewRNG(43)
	for _, off := range raggedOffsets {
		total, batch := off[len(off)-1], len(off)-1
		for _, inner := range [][]int{{3, 7}, {}, {17}} {
			t.Run(fmt.Sprint("expand", off, inner), func(t *testing.T) {
				runRows(t, rng, ops.SequenceExpandOp(off), dev.sequenceExpandOp(off), randn(t, rng, append([]int{batch}, inner...)...))
			})
			t.Run(fmt.Sprint("reverse", off, inner), func(t *testing.T) {
				runRows(t, rng, ops.SequenceReverseOp(off), dev.sequenceReverseOp(off), randn(t, rng, append([]int{total}, inner...)...))
			})
			t.Run(fmt.Sprint("slice", off, inner), func(t *testing.T) {
				starts, lengths := make([]int, batch), make([]int, batch)
				for b := range batch {
					n := off[b+1] - off[b]
					starts[b] = rng.IntN(n + 1)
					lengths[b] = rng.IntN(n - starts[b] + 1)
				}
				runRows(t, rng, ops.SequenceSliceOp(off, starts, lengths), dev.sequenceSliceOp(off, starts, lengths),
					randn(t, rng, append([]int{total}, inner...)...))
			})
		}
	}
	x := up(t, randn(t, rng, 3, 2))
	_, err := dev.sequenceReverseOp([]int{0, 2}).Forward(x)
	require.ErrorContains(t, err, "end at 2")
	_, err = dev.sequenceExpandOp([]int{0, 1, 2}).Forward(x)
	require.ErrorContains(t, err, "want one per row of x (3)")
	_, err = ops.Run(ops.SequenceSliceOp([]int{0, 3}, []int{2}, []int{2}), onDevice(t, randn(t, rng, 3, 2))) // ops.Dispatch's check
	require.ErrorContains(t, err, "sequence 0 of length 3: start 2, length 2 out of range")
}

func TestSequenceConcat(t *testing.T) {
	rng := tensor.NewRNG(44)
	for _, offA := range raggedOffsets {
		batch := len(offA) - 1
		lens := make([]int, batch)
		for b := range lens {
			lens[b] = rng.IntN(4) // some empty
		}
		offB, err := tensor.OffsetsFromLengths(lens)
		require.NoError(t, err)
		for _, need := range [][2]bool{{true, true}, {false, true}} {
			t.Run(fmt.Sprint(offA, offB, need), func(t *testing.T) {
				a, b := randn(t, rng, offA[batch], 3, 5), randn(t, rng, offB[batch], 3, 5)
				in := []*tensor.Tensor{a, b}
				op := ops.SequenceConcatOp(offA, offB)
				out, err := op.Forward(in)
				require.NoError(t, err)
				gout := randn(t, rng, out.Shape()...)
				grads, err := op.Backward(in, out, gout, need[:])
				require.NoError(t, err)
				o := dev.sequenceConcatOp(offA, offB)
				y, err := o.Forward(up(t, a), up(t, b))
				require.NoError(t, err)
				defer y.Free()
				requireClose(t, out, y, tolExact, "forward")
				da, db, err := o.Backward(up(t, gout), need)
				require.NoError(t, err)
				defer freeAll(da, db)
				for k, g := range []*Buffer{da, db} {
					if !need[k] {
						require.Nil(t, g)
						continue
					}
					requireClose(t, grads[k], g, tolExact, fmt.Sprint("gradient ", k))
				}
			})
		}
	}
	// ops.Dispatch's check (sequenceConcatOp.Check) rejects bad inputs on the device.
	_, err := ops.Run(ops.SequenceConcatOp([]int{0, 1}, []int{0, 1, 2}), onDevice(t, randn(t, rng, 1, 2)), onDevice(t, randn(t, rng, 2, 2)))
	require.ErrorContains(t, err, "different numbers of sequences")
	_, err = ops.Run(ops.SequenceConcatOp([]int{0, 1}, []int{0, 1}), onDevice(t, randn(t, rng, 1, 2)), onDevice(t, randn(t, rng, 1, 3)))
	require.ErrorContains(t, err, "with the same D")
}

func TestSequenceSoftmax(t *testing.T) {
	rng := tensor.NewRNG(45)
	for _, off := range raggedOffsets {
		total := off[len(off)-1]
		for _, shape := range [][]int{{total}, {total, 1}} {
			t.Run(fmt.Sprint(off, shape), func(t *testing.T) {
				x := randn(t, rng, shape...)
				if total > 0 {
					x.Float32s()[total-1] = 80 // a large logit: the shift must keep exp finite
				}
				gout := randn(t, rng, shape...)
				want, grads := cpuOp(t, ops.SequenceSoftmaxOp(off), []*tensor.Tensor{x}, gout, []bool{true})
				y, err := dev.sequenceSoftmaxFwd(up(t, x), off)
				require.NoError(t, err)
				defer y.Free()
				requireClose(t, want, y, tolReduce, "forward")
				dx, err := dev.sequenceSoftmaxBwd(y, up(t, gout), off)
				require.NoError(t, err)
				defer dx.Free()
				requireClose(t, grads[0], dx, tolReduce, "backward")
			})
		}
	}
	_, err := ops.Run(ops.SequenceSoftmaxOp([]int{0, 4}), onDevice(t, randn(t, rng, 4, 2))) // ops.Dispatch's check
	require.ErrorContains(t, err, "want x [total] or [total, 1]")
}
