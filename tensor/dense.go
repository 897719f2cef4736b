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

// FromDense wraps a gorgonia *Dense (a masked one is an error: Plumb tensors
// have no mask). A contiguous, non-view Dense shares its
// storage (no copy); a view or transposed Dense is materialized first.
func FromDense(d *gt.Dense) (*Tensor, error) {
	if d == nil {
		return nil, fmt.Errorf("tensor: FromDense of a nil Dense")
	}
	if d.IsMasked() {
		return nil, fmt.Errorf("tensor: FromDense of a masked Dense of shape %v: Plumb tensors have no mask", d.Shape())
	}
	if d.IsView() || !d.IsNativelyAccessible() || d.RequiresIterator() {
		d = d.Materialize().(*gt.Dense)
	}
	data := d.Data()
	if d.IsScalar() {
		// Dense.Data returns the element itself for shape (); take the
		// one-element backing slice instead, so that scalars share too.
		data = scalarBacking(d)
	}
	dt, n, err := dtypeOfSlice(data)
	if err != nil {
		return nil, err
	}
	shape := Shape(d.Shape()).Clone()
	if n != shape.Size() {
		return nil, fmt.Errorf("tensor: Dense of shape %v holds %d elements", shape, n)
	}
	return &Tensor{dtype: dt, shape: shape, data: data}, nil
}

// scalarBacking returns the backing slice of a scalar Dense of a dtype
// Plumb stores, or the element itself (which FromDense then rejects).
func scalarBacking(d *gt.Dense) any {
	switch d.Dtype() {
	case gt.Float32:
		return d.Float32s()
	case gt.Float64:
		return d.Float64s()
	case gt.Int32:
		return d.Int32s()
	case gt.Int64:
		return d.Int64s()
	}
	return d.Data()
}
