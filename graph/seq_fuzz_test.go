package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// FuzzNewSeq puts arbitrary offsets (bytes less 8, so negative and
// decreasing ones too) over values of rows×1 on a tape, through NewSeq and
// as a Seq literal, and runs sequence ops and Backward on them: bad offsets
// give an error, never a panic, and the caller's slice may change after
// the ops without effect.
func FuzzNewSeq(f *testing.F) {
	f.Add(uint8(4), []byte{8, 9, 9, 12})
	f.Add(uint8(0), []byte{8})
	f.Add(uint8(3), []byte{8, 11, 10})
	f.Add(uint8(3), []byte{})
	f.Add(uint8(2), []byte{7, 10})
	f.Fuzz(func(t *testing.T, rows uint8, offBytes []byte) {
		x, err := tensor.RandNormal(tensor.NewRNG(1), tensor.Float64, 0, 1, int(rows), 1)
		require.NoError(t, err)
		off := make([]int, len(offBytes))
		for i, b := range offBytes {
			off[i] = int(b) - 8
		}
		for _, literal := range []bool{false, true} {
			tape := NewTape()
			v := tape.Var(x)
			s := NewSeq(v, off)
			if literal {
				s = Seq{Values: v, Offsets: append([]int(nil), off...)}
			}
			_ = s.Lengths()
			_ = s.BatchSize()
			pooled := SequencePool(SequenceSoftmax(SequenceReverse(s)), ops.SequencePoolMax, 0)
			padded, _ := PadSeq(s)
			loss := Add(Sum(pooled), Sum(padded))
			for i := range s.Offsets {
				s.Offsets[i]++ // a caller reusing its slice before Backward
			}
			err := tape.Backward(loss)
			if NewSeq(tape.Var(x), off).Err() == nil && len(off) > 1 && off[len(off)-1] > 0 {
				require.NoError(t, err, "valid offsets %v", off)
			}
		}
	})
}
