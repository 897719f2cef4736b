package data

import (
	"fmt"
	"slices"

	"github.com/plumbml/plumb/tensor"
)

// Batch is one mini-batch: the same named fields as its dataset, each
// holding the batch's examples. Dense fields are [B, ...]; ragged fields
// are tensor.Ragged batches that graph's Tape.ConstSeq takes as they are,
// or that Padded turns into [B, T, ...] plus a mask. A batch owns its
// tensors (they are copies), so a step may modify them.
type Batch struct {
	n      int
	fields []field
	index  []int
}

// Len is the number of examples in the batch (0 for a nil Batch).
func (b *Batch) Len() int {
	if b == nil {
		return 0
	}
	return b.n
}

// Names lists the fields.
func (b *Batch) Names() []string {
	if b == nil {
		return nil
	}
	return fieldNames(b.fields)
}

// Index returns where each example came from: its row in the dataset for
// a Loader's batches, its position in the pass for a Stream's.
func (b *Batch) Index() []int {
	if b == nil {
		return nil
	}
	return b.index
}

func (b *Batch) field(name string) *field {
	if b == nil {
		return nil
	}
	for i := range b.fields {
		if b.fields[i].name == name {
			return &b.fields[i]
		}
	}
	return nil
}

// Tensor returns the dense field name, [B, ...], or nil when the batch has
// no dense field of that name (graph's Tape.Const of nil fails with an
// error, so a misspelt name is reported at Backward, not as a panic).
func (b *Batch) Tensor(name string) *tensor.Tensor {
	if f := b.field(name); f != nil {
		return f.dense
	}
	return nil
}

// Ragged returns the ragged field name or nil when there is none.
func (b *Batch) Ragged(name string) *tensor.Ragged {
	if f := b.field(name); f != nil {
		return f.ragged
	}
	return nil
}

// Padded returns the ragged field name as a padded tensor [B, T, D...]
// (T the longest sequence in this batch, steps past a sequence's end set to
// pad) and a float32 mask [B, T] that is 1 on real steps and 0 on padding.
// Bucketing (BucketBy) keeps T close to every sequence's length.
func (b *Batch) Padded(name string, pad float64) (padded, mask *tensor.Tensor, err error) {
	r := b.Ragged(name)
	if r == nil {
		return nil, nil, fmt.Errorf("data: batch has no ragged field %q (fields %v)", name, b.Names())
	}
	if padded, _, err = r.ToPadded(pad); err != nil {
		return nil, nil, fmt.Errorf("data: padding field %q: %w", name, err)
	}
	if mask, err = r.Mask(tensor.Float32); err != nil {
		return nil, nil, fmt.Errorf("data: mask of field %q: %w", name, err)
	}
	return padded, mask, nil
}

// Example is one record from a Stream or for FromExamples: field name to
// value. A value is one of
//   - int, int64, float32 or float64: a scalar, batched to a dense [B]
//     field (int becomes int64);
//   - []int64, []int32, []float32 or []float64: a sequence, batched to a
//     ragged field;
//   - *tensor.Tensor: a fixed-shape entry, stacked to a dense [B, ...] field.
//
// Every example of a pass must have the same fields with the same kinds
// (and, for tensors, the same shape and dtype).
type Example map[string]any

// FromExamples builds an in-memory dataset from examples (see Example).
// Its fields are sorted by name.
func FromExamples(exs []Example) (*Dataset, error) {
	if len(exs) == 0 {
		return nil, fmt.Errorf("data: FromExamples of no examples: the fields are unknown")
	}
	b, err := collate(exs, nil)
	if err != nil {
		return nil, err
	}
	return &Dataset{n: b.n, fields: b.fields}, nil
}

// collate batches examples (at least one) into dense and ragged fields,
// sorted by name.
func collate(exs []Example, index []int) (*Batch, error) {
	names := make([]string, 0, len(exs[0]))
	for name := range exs[0] {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, ex := range exs {
		if len(ex) != len(names) {
			return nil, fmt.Errorf("data: example %d has %d fields, want the %d of the first example %v", i, len(ex), len(names), names)
		}
	}
	b := &Batch{n: len(exs), index: index}
	for _, name := range names {
		var f field
		var err error
		switch exs[0][name].(type) {
		case int, int64:
			f.dense, err = collateScalars[int64](exs, name)
		case float32:
			f.dense, err = collateScalars[float32](exs, name)
		case float64:
			f.dense, err = collateScalars[float64](exs, name)
		case []int64:
			f.ragged, err = collateSeqs[int64](exs, name)
		case []int32:
			f.ragged, err = collateSeqs[int32](exs, name)
		case []float32:
			f.ragged, err = collateSeqs[float32](exs, name)
		case []float64:
			f.ragged, err = collateSeqs[float64](exs, name)
		case *tensor.Tensor:
			f.dense, err = collateTensors(exs, name)
		default:
			err = fmt.Errorf("data: field %q of example 0 is a %T: want a scalar, a slice or a *tensor.Tensor", name, exs[0][name])
		}
		if err != nil {
			return nil, err
		}
		f.name = name
		b.fields = append(b.fields, f)
	}
	return b, nil
}

func collateScalars[T tensor.Elem](exs []Example, name string) (*tensor.Tensor, error) {
	out := make([]T, len(exs))
	for i, ex := range exs {
		switch v := ex[name].(type) {
		case T:
			out[i] = v
		case int:
			if _, ok := any(out[i]).(int64); ok {
				out[i] = T(v)
				continue
			}
			return nil, kindError(ex, name, i, exs[0][name])
		default:
			return nil, kindError(ex, name, i, exs[0][name])
		}
	}
	return tensor.MustFromSlice(out, len(out)), nil
}

func collateSeqs[T tensor.Elem](exs []Example, name string) (*tensor.Ragged, error) {
	seqs := make([][]T, len(exs))
	for i, ex := range exs {
		v, ok := ex[name].([]T)
		if !ok {
			return nil, kindError(ex, name, i, exs[0][name])
		}
		seqs[i] = v
	}
	return SeqField(name, seqs).Ragged, nil
}

func collateTensors(exs []Example, name string) (*tensor.Tensor, error) {
	ts := make([]*tensor.Tensor, len(exs))
	for i, ex := range exs {
		t, ok := ex[name].(*tensor.Tensor)
		if !ok {
			return nil, kindError(ex, name, i, exs[0][name])
		}
		if t == nil {
			return nil, fmt.Errorf("data: field %q of example %d is a nil tensor", name, i)
		}
		if i > 0 && t.DType() != ts[0].DType() {
			return nil, fmt.Errorf("data: field %q of example %d is %v, but example 0's is %v", name, i, t.DType(), ts[0].DType())
		}
		ts[i] = t
	}
	out, err := tensor.Stack(0, ts...)
	if err != nil {
		return nil, fmt.Errorf("data: field %q: %w", name, err)
	}
	return out, nil
}

func kindError(ex Example, name string, i int, first any) error {
	v, ok := ex[name]
	if !ok {
		return fmt.Errorf("data: example %d lacks field %q", i, name)
	}
	return fmt.Errorf("data: field %q of example %d is a %T, but example 0's is a %T", name, i, v, first)
}
