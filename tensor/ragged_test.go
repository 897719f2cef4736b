package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRagged(t *testing.T) {
	tests := []struct {
		name    string
		values  *Tensor
		offsets []int
		wantErr string
	}{
		{name: "valid", values: Zeros(Float32, 5, 2), offsets: []int{0, 2, 2, 5}},
		{name: "empty batch", values: Zeros(Float32, 0, 2), offsets: []int{0}},
		{name: "all empty sequences", values: Zeros(Float32, 0, 2), offsets: []int{0, 0, 0}},
		{name: "rank 1 values", values: Zeros(Int64, 3), offsets: []int{0, 3}},
		{name: "scalar values", values: Scalar[float32](1), offsets: []int{0, 1}, wantErr: "rank >= 1"},
		{name: "no offsets", values: Zeros(Float32, 0, 2), offsets: nil, wantErr: "must start at 0"},
		{name: "not starting at 0", values: Zeros(Float32, 5, 2), offsets: []int{1, 5}, wantErr: "must start at 0"},
		{name: "decreasing", values: Zeros(Float32, 5, 2), offsets: []int{0, 3, 2, 5}, wantErr: "decrease at 2: 2 after 3"},
		{name: "overrunning", values: Zeros(Float32, 5, 2), offsets: []int{0, 3, 6}, wantErr: "end at 6 but values have 5 rows"},
		{name: "falling short", values: Zeros(Float32, 5, 2), offsets: []int{0, 3, 4}, wantErr: "end at 4 but values have 5 rows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRagged(tc.values, tc.offsets)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, len(tc.offsets)-1, r.BatchSize())
			tc.offsets[0] = 99
			assert.Equal(t, 0, r.Offsets[0], "NewRagged copies the offsets")
		})
	}
}

func TestOffsetsFromLengths(t *testing.T) {
	off, err := OffsetsFromLengths([]int{2, 0, 3, 1})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2, 2, 5, 6}, off)
	off, err = OffsetsFromLengths(nil)
	require.NoError(t, err)
	assert.Equal(t, []int{0}, off)
	_, err = OffsetsFromLengths([]int{1, -1})
	require.ErrorContains(t, err, "negative sequence length -1 at 1")
}

func TestRaggedAccessors(t *testing.T) {
	r, err := NewRagged(MustFromSlice(iota64(12), 6, 2), []int{0, 2, 2, 6})
	require.NoError(t, err)
	assert.Equal(t, 3, r.BatchSize())
	assert.Equal(t, []int{2, 0, 4}, r.Lengths())
	assert.Equal(t, 4, r.MaxLen())

	s, err := r.Seq(2)
	require.NoError(t, err)
	assert.Equal(t, Shape{4, 2}, s.Shape())
	assert.Equal(t, iota64(12)[4:], s.Float64s())
	s.SetAt(0, -1)
	assert.Equal(t, -1.0, r.Values.At(4), "Seq is a view")

	e, err := r.Seq(1)
	require.NoError(t, err)
	assert.Equal(t, Shape{0, 2}, e.Shape())
	for _, b := range []int{-1, 3} {
		_, err = r.Seq(b)
		assert.ErrorContains(t, err, "of a batch of 3")
	}

	empty, err := NewRagged(Zeros(Float32, 0, 2), []int{0})
	require.NoError(t, err)
	assert.Equal(t, 0, empty.MaxLen())
}

func TestRaggedPaddedRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		lengths []int
		inner   []int
	}{
		{name: "mixed with empty and length 1", lengths: []int{3, 0, 1, 17, 2}, inner: []int{4}},
		{name: "one long sequence", lengths: []int{40}, inner: []int{3}},
		{name: "all length 1", lengths: []int{1, 1, 1}, inner: []int{2}},
		{name: "all empty", lengths: []int{0, 0}, inner: []int{5}},
		{name: "no sequences", lengths: []int{}, inner: []int{2}},
		{name: "scalar steps", lengths: []int{2, 0, 5}, inner: []int{}},
		{name: "rank 2 steps", lengths: []int{1, 3}, inner: []int{2, 3}},
	}
	rng := NewRNG(21)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			off, err := OffsetsFromLengths(tc.lengths)
			require.NoError(t, err)
			vals, err := RandNormal(rng, Float32, 0, 1, append([]int{off[len(off)-1]}, tc.inner...)...)
			require.NoError(t, err)
			r, err := NewRagged(vals, off)
			require.NoError(t, err)

			const pad = -9
			padded, lengths, err := r.ToPadded(pad)
			require.NoError(t, err)
			assert.Equal(t, tc.lengths, lengths)
			maxLen := r.MaxLen()
			assert.Equal(t, append(Shape{len(tc.lengths), maxLen}, tc.inner...), padded.Shape())
			row := Shape(tc.inner).Size()
			for b, l := range tc.lengths {
				for s := range maxLen {
					for k := range row {
						got := padded.At((b*maxLen+s)*row + k)
						if s < l {
							assert.Equal(t, vals.At((off[b]+s)*row+k), got, "b=%d s=%d k=%d", b, s, k)
						} else {
							assert.Equal(t, float64(pad), got, "padding at b=%d s=%d", b, s)
						}
					}
				}
			}

			back, err := RaggedFromPadded(padded, lengths)
			require.NoError(t, err)
			assert.Equal(t, r.Offsets, back.Offsets)
			assert.Equal(t, vals.Shape(), back.Values.Shape())
			assert.Equal(t, vals.Float32s(), back.Values.Float32s())

			mask, err := r.Mask(Float32)
			require.NoError(t, err)
			assert.Equal(t, Shape{len(tc.lengths), maxLen}, mask.Shape())
			for b, l := range tc.lengths {
				for s := range maxLen {
					want := 0.0
					if s < l {
						want = 1
					}
					assert.Equal(t, want, mask.At(b*maxLen+s), "mask b=%d s=%d", b, s)
				}
			}
		})
	}
}

func TestRaggedFromPaddedErrors(t *testing.T) {
	padded := Zeros(Float64, 2, 3, 4)
	tests := []struct {
		name    string
		padded  *Tensor
		lengths []int
		wantErr string
	}{
		{name: "length above T", padded: padded, lengths: []int{1, 4}, wantErr: "length 4 of sequence 1 outside [0, 3]"},
		{name: "negative length", padded: padded, lengths: []int{-1, 2}, wantErr: "length -1 of sequence 0"},
		{name: "too few lengths", padded: padded, lengths: []int{1}, wantErr: "1 lengths for a padded batch"},
		{name: "too many lengths", padded: padded, lengths: []int{1, 2, 3}, wantErr: "3 lengths"},
		{name: "rank 1", padded: Zeros(Float64, 3), lengths: []int{1, 1, 1}, wantErr: "must be [B, T, ...]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RaggedFromPadded(tc.padded, tc.lengths)
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestRaggedMaskDTypes(t *testing.T) {
	r, err := NewRagged(Zeros(Float32, 3, 1), []int{0, 1, 3})
	require.NoError(t, err)
	for _, dt := range []DType{Float64, Int32, Int64} {
		m, err := r.Mask(dt)
		require.NoError(t, err)
		assert.Equal(t, dt, m.DType())
		assert.Equal(t, []float64{1, 0, 1, 1}, []float64{m.At(0), m.At(1), m.At(2), m.At(3)})
	}
	_, err = r.Mask(DType(0))
	require.ErrorContains(t, err, "invalid dtype")
}

func TestNewRaggedNilValues(t *testing.T) {
	_, err := NewRagged(nil, []int{0})
	require.ErrorContains(t, err, "nil values")
}

// A Ragged built as a literal (or the zero value) never panics: the
// methods without an error return empty results, the others an error.
func TestRaggedLiteralsDoNotPanic(t *testing.T) {
	v := Zeros(Float32, 3, 2)
	for _, r := range []*Ragged{nil, {}, {Values: v}, {Values: v, Offsets: []int{0, 2, 1, 3}}, {Values: v, Offsets: []int{1, 3}}, {Offsets: []int{0, 3}}} {
		require.NotPanics(t, func() {
			require.LessOrEqual(t, len(r.Lengths()), 3)
			require.GreaterOrEqual(t, r.BatchSize(), 0)
			require.GreaterOrEqual(t, r.MaxLen(), 0)
			_, err := r.Seq(0)
			require.Error(t, err)
			_, _, err = r.ToPadded(0)
			require.Error(t, err)
			_, err = r.Mask(Float32)
			require.Error(t, err)
		}, "%+v", r)
	}
	require.Nil(t, (&Ragged{Values: v}).Lengths())
	_, err := RaggedFromPadded(nil, nil)
	require.ErrorContains(t, err, "nil")
}
