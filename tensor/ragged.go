package tensor

import "fmt"

// Ragged is a batch of variable-length sequences stored without padding:
// Values holds every step of every sequence, [total_steps, D...], and
// sequence b occupies rows Offsets[b] to Offsets[b+1]. This is Paddle's
// level-1 LoD. An empty sequence has Offsets[b] == Offsets[b+1].
type Ragged struct {
	Values  *Tensor
	Offsets []int
}

// NewRagged checks that offsets start at 0, never decrease and end at the
// number of rows of values.
func NewRagged(values *Tensor, offsets []int) (*Ragged, error) {
	if values == nil {
		return nil, fmt.Errorf("tensor: ragged batch with nil values")
	}
	if values.Rank() < 1 {
		return nil, fmt.Errorf("tensor: ragged values must have rank >= 1, got shape %v", values.shape)
	}
	if len(offsets) < 1 || offsets[0] != 0 {
		return nil, fmt.Errorf("tensor: ragged offsets %v must start at 0", offsets)
	}
	for i := 1; i < len(offsets); i++ {
		if offsets[i] < offsets[i-1] {
			return nil, fmt.Errorf("tensor: ragged offsets decrease at %d: %d after %d", i, offsets[i], offsets[i-1])
		}
	}
	if last := offsets[len(offsets)-1]; last != values.shape[0] {
		return nil, fmt.Errorf("tensor: ragged offsets end at %d but values have %d rows (shape %v)", last, values.shape[0], values.shape)
	}
	return &Ragged{Values: values, Offsets: append([]int(nil), offsets...)}, nil
}

// OffsetsFromLengths turns sequence lengths into offsets [0, l0, l0+l1, ...].
func OffsetsFromLengths(lengths []int) ([]int, error) {
	off := make([]int, len(lengths)+1)
	for i, l := range lengths {
		if l < 0 {
			return nil, fmt.Errorf("tensor: negative sequence length %d at %d", l, i)
		}
		off[i+1] = off[i] + l
	}
	return off, nil
}

// BatchSize is the number of sequences (0 for a nil r or offsets too
// short to describe any).
func (r *Ragged) BatchSize() int {
	if r == nil {
		return 0
	}
	return max(0, len(r.Offsets)-1)
}

// Lengths returns each sequence's number of steps, or nil when the offsets
// do not start at 0 and never decrease (a Ragged built as a literal rather
// than by NewRagged). It does not look at Values.
func (r *Ragged) Lengths() []int {
	if r == nil || len(r.Offsets) == 0 || r.Offsets[0] != 0 {
		return nil
	}
	l := make([]int, r.BatchSize())
	for i := range l {
		if l[i] = r.Offsets[i+1] - r.Offsets[i]; l[i] < 0 {
			return nil
		}
	}
	return l
}

// MaxLen is the longest sequence's length (0 for an empty batch).
func (r *Ragged) MaxLen() int {
	m := 0
	for _, l := range r.Lengths() {
		m = max(m, l)
	}
	return m
}

// check validates a Ragged that may have been built as a literal, as
// NewRagged does.
func (r *Ragged) check() error {
	if r == nil {
		return fmt.Errorf("tensor: nil ragged batch")
	}
	_, err := NewRagged(r.Values, r.Offsets)
	return err
}

// Seq returns sequence b as a view [len_b, D...].
func (r *Ragged) Seq(b int) (*Tensor, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	if b < 0 || b >= r.BatchSize() {
		return nil, fmt.Errorf("tensor: sequence %d of a batch of %d", b, r.BatchSize())
	}
	return r.Values.SliceRows(r.Offsets[b], r.Offsets[b+1])
}

// ToPadded returns [B, T, D...] with T the longest length, padded with pad,
// and the lengths.
func (r *Ragged) ToPadded(pad float64) (*Tensor, []int, error) {
	if err := r.check(); err != nil {
		return nil, nil, err
	}
	if r.Values.dev != nil {
		return nil, nil, r.Values.onDevice("ToPadded")
	}
	b, t := r.BatchSize(), r.MaxLen()
	inner := r.Values.shape[1:]
	out, err := Full(r.Values.dtype, pad, append([]int{b, t}, inner...)...)
	if err != nil {
		return nil, nil, err
	}
	row := inner.Size()
	for i := 0; i < b; i++ {
		n := (r.Offsets[i+1] - r.Offsets[i]) * row
		copyData(subslice(out.data, i*t*row, i*t*row+n), subslice(r.Values.data, r.Offsets[i]*row, r.Offsets[i]*row+n))
	}
	return out, r.Lengths(), nil
}

// RaggedFromPadded takes the first lengths[b] steps of each row of padded [B, T, D...].
func RaggedFromPadded(padded *Tensor, lengths []int) (*Ragged, error) {
	if padded == nil {
		return nil, fmt.Errorf("tensor: RaggedFromPadded of a nil tensor")
	}
	if padded.dev != nil {
		return nil, padded.onDevice("RaggedFromPadded")
	}
	if padded.Rank() < 2 {
		return nil, fmt.Errorf("tensor: padded batch must be [B, T, ...], got shape %v", padded.shape)
	}
	b, t := padded.shape[0], padded.shape[1]
	if len(lengths) != b {
		return nil, fmt.Errorf("tensor: %d lengths for a padded batch of shape %v", len(lengths), padded.shape)
	}
	for i, l := range lengths {
		if l < 0 || l > t {
			return nil, fmt.Errorf("tensor: length %d of sequence %d outside [0, %d] for padded shape %v", l, i, t, padded.shape)
		}
	}
	off, err := OffsetsFromLengths(lengths)
	if err != nil {
		return nil, err
	}
	inner := padded.shape[2:]
	vals := Zeros(padded.dtype, append([]int{off[b]}, inner...)...)
	row := inner.Size()
	for i := 0; i < b; i++ {
		n := lengths[i] * row
		copyData(subslice(vals.data, off[i]*row, off[i]*row+n), subslice(padded.data, i*t*row, i*t*row+n))
	}
	return &Ragged{Values: vals, Offsets: off}, nil
}

// Mask returns a [B, T] tensor of dtype dt with 1 at real steps and 0 at padding.
func (r *Ragged) Mask(dt DType) (*Tensor, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	b, t := r.BatchSize(), r.MaxLen()
	m, err := New(dt, b, t)
	if err != nil {
		return nil, err
	}
	for i, l := range r.Lengths() {
		for j := 0; j < l; j++ {
			m.SetAt(i*t+j, 1)
		}
	}
	return m, nil
}
