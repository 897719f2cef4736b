package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/plumbml/plumb/tensor"
)

// Dataset is an in-memory table of N examples with named fields. Each
// field holds one entry per example, either
//   - dense: a tensor whose axis 0 is the example axis, [N, ...] (MNIST's
//     "image" [N, 1, 28, 28] float32 and "label" [N] int64), or
//   - ragged: a tensor.Ragged of N variable-length sequences, Values
//     [total steps, D...] and Offsets [N+1] (IMDB's "words", token ids).
//
// A Dataset is read-only once built: Take returns views, Subset and Split
// copies. Batch it with a Loader.
type Dataset struct {
	n      int
	fields []field // in the order given to NewDataset
}

// field is one column: exactly one of dense and ragged is set.
type field struct {
	name   string
	dense  *tensor.Tensor
	ragged *tensor.Ragged
}

// Field names one column for NewDataset. Exactly one of Dense and Ragged is
// set; DenseField, RaggedField and SeqField build them.
type Field struct {
	Name   string
	Dense  *tensor.Tensor
	Ragged *tensor.Ragged
}

// DenseField is a dense column [N, ...].
func DenseField(name string, t *tensor.Tensor) Field { return Field{Name: name, Dense: t} }

// RaggedField is a column of N variable-length sequences.
func RaggedField(name string, r *tensor.Ragged) Field { return Field{Name: name, Ragged: r} }

// SeqField is a ragged column built from Go slices: sequence i is seqs[i]
// (Values [sum of lengths], one value per step). The values are copied.
func SeqField[T tensor.Elem](name string, seqs [][]T) Field {
	lengths := make([]int, len(seqs))
	total := 0
	for i, s := range seqs {
		lengths[i] = len(s)
		total += len(s)
	}
	vals := make([]T, 0, total)
	for _, s := range seqs {
		vals = append(vals, s...)
	}
	off, _ := tensor.OffsetsFromLengths(lengths) // lengths are never negative
	return Field{Name: name, Ragged: &tensor.Ragged{Values: tensor.MustFromSlice(vals, total), Offsets: off}}
}

// NewDataset checks and joins fields into a dataset: at least one field,
// distinct non-empty names, exactly one of Dense and Ragged per field,
// dense tensors of rank >= 1, valid ragged offsets, and the same number of
// examples in every field. Tensors are kept, not copied.
func NewDataset(fields ...Field) (*Dataset, error) {
	if len(fields) == 0 {
		return nil, fmt.Errorf("data: NewDataset needs at least one field")
	}
	d := &Dataset{n: -1}
	for i, f := range fields {
		if f.Name == "" {
			return nil, fmt.Errorf("data: NewDataset: field %d has no name", i)
		}
		if d.index(f.Name) >= 0 {
			return nil, fmt.Errorf("data: NewDataset: field %q given twice", f.Name)
		}
		var n int
		switch {
		case (f.Dense == nil) == (f.Ragged == nil):
			return nil, fmt.Errorf("data: NewDataset: field %q must set exactly one of Dense and Ragged", f.Name)
		case f.Dense != nil:
			if f.Dense.Rank() < 1 {
				return nil, fmt.Errorf("data: NewDataset: dense field %q has shape %v: want an example axis [N, ...]", f.Name, f.Dense.Shape())
			}
			n = f.Dense.Dim(0)
		default:
			r, err := tensor.NewRagged(f.Ragged.Values, f.Ragged.Offsets)
			if err != nil {
				return nil, fmt.Errorf("data: NewDataset: ragged field %q: %w", f.Name, err)
			}
			f.Ragged, n = r, r.BatchSize()
		}
		if d.n >= 0 && n != d.n {
			return nil, fmt.Errorf("data: NewDataset: field %q has %d examples but field %q has %d", f.Name, n, d.fields[0].name, d.n)
		}
		d.n = n
		d.fields = append(d.fields, field{name: f.Name, dense: f.Dense, ragged: f.Ragged})
	}
	return d, nil
}

func (d *Dataset) index(name string) int {
	if d == nil {
		return -1
	}
	return slices.IndexFunc(d.fields, func(f field) bool { return f.name == name })
}

// Len is the number of examples (0 for a nil Dataset).
func (d *Dataset) Len() int {
	if d == nil {
		return 0
	}
	return d.n
}

// Names lists the fields in the order they were given.
func (d *Dataset) Names() []string {
	if d == nil {
		return nil
	}
	return fieldNames(d.fields)
}

// Tensor returns the dense field name, [N, ...], or nil when there is no
// dense field of that name. The caller must not modify it.
func (d *Dataset) Tensor(name string) *tensor.Tensor {
	if i := d.index(name); i >= 0 {
		return d.fields[i].dense
	}
	return nil
}

// Ragged returns the ragged field name, or nil when there is no ragged
// field of that name. The caller must not modify it.
func (d *Dataset) Ragged(name string) *tensor.Ragged {
	if i := d.index(name); i >= 0 {
		return d.fields[i].ragged
	}
	return nil
}

// Take returns the first n examples (all when n >= Len, none when n <= 0)
// as views that share storage with d, for quick runs on a small slice.
func (d *Dataset) Take(n int) *Dataset {
	if d == nil {
		return &Dataset{}
	}
	n = max(0, min(n, d.n))
	out := &Dataset{n: n, fields: make([]field, len(d.fields))}
	for i, f := range d.fields {
		out.fields[i] = field{name: f.name}
		if f.dense != nil {
			out.fields[i].dense = rows(f.dense, 0, n)
		} else {
			off := f.ragged.Offsets[:n+1]
			out.fields[i].ragged = &tensor.Ragged{Values: rows(f.ragged.Values, 0, off[n]), Offsets: off}
		}
	}
	return out
}

// Subset returns a copy holding the examples at idx, in that order
// (repeats allowed). An index outside [0, Len) is an error.
func (d *Dataset) Subset(idx []int) (*Dataset, error) {
	if d == nil {
		return nil, fmt.Errorf("data: Subset of a nil Dataset")
	}
	for i, j := range idx {
		if j < 0 || j >= d.n {
			return nil, fmt.Errorf("data: subset index %d at position %d outside [0, %d)", j, i, d.n)
		}
	}
	return &Dataset{n: len(idx), fields: gatherFields(d.fields, idx)}, nil
}

// Split holds out a validation set: it draws a permutation from seed,
// puts round(valFraction·Len) examples in val and the rest in train, each
// kept in the dataset's order. valFraction must lie in [0, 1]. The same
// seed always gives the same split.
func (d *Dataset) Split(valFraction float64, seed uint64) (train, val *Dataset, err error) {
	if d == nil {
		return nil, nil, fmt.Errorf("data: Split of a nil Dataset")
	}
	if !(valFraction >= 0 && valFraction <= 1) {
		return nil, nil, fmt.Errorf("data: Split: validation fraction %v outside [0, 1]", valFraction)
	}
	perm := rand.New(rand.NewPCG(seed, splitStream)).Perm(d.n)
	k := int(math.Round(valFraction * float64(d.n)))
	valIdx, trainIdx := perm[:k], perm[k:]
	slices.Sort(valIdx)
	slices.Sort(trainIdx)
	if train, err = d.Subset(trainIdx); err != nil {
		return nil, nil, err
	}
	if val, err = d.Subset(valIdx); err != nil {
		return nil, nil, err
	}
	return train, val, nil
}

// splitStream separates Split's random stream from the Loader's.
const splitStream = 0x51e7

func fieldNames(fs []field) []string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return names
}

// gatherFields copies the examples at idx (each within range) of every field.
func gatherFields(fs []field, idx []int) []field {
	out := make([]field, len(fs))
	for i, f := range fs {
		out[i] = field{name: f.name}
		if f.dense != nil {
			ones := make([]int, len(idx))
			for k := range ones {
				ones[k] = 1
			}
			out[i].dense = gatherRows(f.dense, idx, ones)
			continue
		}
		starts, lengths := make([]int, len(idx)), make([]int, len(idx))
		for k, j := range idx {
			starts[k], lengths[k] = f.ragged.Offsets[j], f.ragged.Offsets[j+1]-f.ragged.Offsets[j]
		}
		off, _ := tensor.OffsetsFromLengths(lengths) // lengths come from valid offsets
		out[i].ragged = &tensor.Ragged{Values: gatherRows(f.ragged.Values, starts, lengths), Offsets: off}
	}
	return out
}

// rows is the view of rows [from, to) of t. Callers pass bounds already
// checked against t.Dim(0), so SliceRows cannot fail here.
func rows(t *tensor.Tensor, from, to int) *tensor.Tensor {
	r, err := t.SliceRows(from, to)
	if err != nil {
		panic("data: " + err.Error()) // unreachable: bounds checked by the caller
	}
	return r
}

// gatherRows copies the row ranges [starts[k], starts[k]+counts[k]) of t
// (each within t's axis 0), one after another, into a new tensor whose
// axis 0 is the sum of counts.
func gatherRows(t *tensor.Tensor, starts, counts []int) *tensor.Tensor {
	total := 0
	for _, c := range counts {
		total += c
	}
	shape := t.Shape().Clone()
	shape[0] = total
	out := tensor.Zeros(t.DType(), shape...)
	row := t.Shape()[1:].Size()
	switch t.DType() {
	case tensor.Float32:
		copyRanges(tensor.Data[float32](out), tensor.Data[float32](t), starts, counts, row)
	case tensor.Float64:
		copyRanges(tensor.Data[float64](out), tensor.Data[float64](t), starts, counts, row)
	case tensor.Int32:
		copyRanges(tensor.Data[int32](out), tensor.Data[int32](t), starts, counts, row)
	case tensor.Int64:
		copyRanges(tensor.Data[int64](out), tensor.Data[int64](t), starts, counts, row)
	}
	return out
}

func copyRanges[T tensor.Elem](dst, src []T, starts, counts []int, row int) {
	at := 0
	for k, s := range starts {
		n := counts[k] * row
		copy(dst[at:at+n], src[s*row:s*row+n])
		at += n
	}
}
