package tensor

import (
	"fmt"

	gt "gorgonia.org/tensor"
)

// Dense returns a gorgonia.org/tensor *Dense that shares t's storage (no copy).
// Gorgonia cannot represent zero-size shapes, so those return an error.
func (t *Tensor) Dense() (*gt.Dense, error) {
	if t.Size() == 0 {
		return nil, fmt.Errorf("tensor: gorgonia Dense cannot hold zero-size shape %v", t.shape)
	}
	return gt.New(gt.WithShape(t.shape...), gt.WithBacking(t.data)), nil
}

// FromDense wraps a gorgonia *Dense. A contiguous, non-view Dense shares its
// storage (no copy); a view or transposed Dense is materialized first.
func FromDense(d *gt.Dense) (*Tensor, error) {
	if d.IsView() || !d.IsNativelyAccessible() || d.RequiresIterator() {
		d = d.Materialize().(*gt.Dense)
	}
	dt, n, err := dtypeOfSlice(d.Data())
	if err != nil {
		return nil, err
	}
	shape := Shape(d.Shape()).Clone()
	if n != shape.Size() {
		// Gorgonia stores a scalar as shape () with one element.
		return nil, fmt.Errorf("tensor: Dense of shape %v holds %d elements", shape, n)
	}
	return &Tensor{dtype: dt, shape: shape, data: d.Data()}, nil
}
