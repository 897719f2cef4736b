package data

import (
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// MapTensors returns a batch with the same fields whose tensors are f's
// results: each dense field's tensor and each ragged field's values (its
// offsets, which the ops read on the host, are kept). f gets the field's
// name, so that it may leave some fields as they are. It is how the
// trainer moves a batch to the model's device (train.Config.Device) with
// graph.Tape.Move; b itself is not changed.
func (b *Batch) MapTensors(f func(name string, x *tensor.Tensor) (*tensor.Tensor, error)) (*Batch, error) {
	if b == nil || f == nil {
		return nil, fmt.Errorf("data: MapTensors needs a batch and a function (got %v, %v)", b != nil, f != nil)
	}
	out := &Batch{n: b.n, index: b.index, fields: make([]field, len(b.fields))}
	for i, fl := range b.fields {
		nf := field{name: fl.name}
		switch {
		case fl.dense != nil:
			x, err := f(fl.name, fl.dense)
			if err != nil {
				return nil, fmt.Errorf("data: field %q: %w", fl.name, err)
			}
			nf.dense = x
		case fl.ragged != nil:
			x, err := f(fl.name, fl.ragged.Values)
			if err != nil {
				return nil, fmt.Errorf("data: field %q: %w", fl.name, err)
			}
			nf.ragged = &tensor.Ragged{Values: x, Offsets: fl.ragged.Offsets}
		}
		out.fields[i] = nf
	}
	return out, nil
}
