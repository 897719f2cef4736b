package tensor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzOffsets turns fuzz bytes into offsets in [-8, 247], so that inputs
// reach negative, decreasing and out-of-range offsets as well as valid ones.
func fuzzOffsets(b []byte) []int {
	off := make([]int, len(b))
	for i, x := range b {
		off[i] = int(x) - 8
	}
	return off
}

// FuzzNewRagged builds a ragged batch from arbitrary offsets over values of
// rows×inner elements. NewRagged either refuses them or returns a batch on
// which every method works and ToPadded and RaggedFromPadded round-trip; a
// literal Ragged with the same fields never panics either.
func FuzzNewRagged(f *testing.F) {
	f.Add(uint8(4), uint8(2), []byte{8, 9, 9, 12})
	f.Add(uint8(0), uint8(3), []byte{8})
	f.Add(uint8(3), uint8(1), []byte{8, 11, 10})
	f.Add(uint8(5), uint8(0), []byte{7, 13})
	f.Add(uint8(2), uint8(2), []byte{})
	f.Fuzz(func(t *testing.T, rows, inner uint8, offBytes []byte) {
		v := Zeros(Float32, int(rows), int(inner))
		for i := range v.Size() {
			v.SetAt(i, float64(i))
		}
		off := fuzzOffsets(offBytes)
		lit := &Ragged{Values: v, Offsets: off}
		_ = lit.Lengths()
		_ = lit.MaxLen()
		_, _ = lit.Seq(0)
		_, _, _ = lit.ToPadded(0)
		_, _ = lit.Mask(Float32)

		r, err := NewRagged(v, off)
		if err != nil {
			return
		}
		off[0] = 99 // the batch keeps its own offsets
		lengths := r.Lengths()
		require.Len(t, lengths, r.BatchSize())
		for b := range r.BatchSize() {
			s, err := r.Seq(b)
			require.NoError(t, err)
			require.Equal(t, lengths[b], s.Dim(0))
		}
		padded, l, err := r.ToPadded(-1)
		require.NoError(t, err)
		require.Equal(t, lengths, l)
		back, err := RaggedFromPadded(padded, l)
		require.NoError(t, err)
		require.Equal(t, r.Offsets, back.Offsets)
		require.Equal(t, r.Values.Float32s(), back.Values.Float32s())
		m, err := r.Mask(Float64)
		require.NoError(t, err)
		require.Equal(t, tensorShape(r.BatchSize(), r.MaxLen()), m.Shape())
	})
}

func tensorShape(d ...int) Shape { return Shape(d) }
