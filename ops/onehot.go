package ops

import (
	"github.com/plumbml/plumb/tensor"
)

// OneHot returns indices (int32 or int64, any shape) encoded as one-hot
// vectors of length depth along a new last axis, in dtype dt: the output
// has shape indices.shape + [depth], 1 at each label and 0 elsewhere
// (tf.one_hot with on_value 1, off_value 0, axis -1). Unlike tf.one_hot,
// which writes an all-zero row, a label outside [0, depth) is an error: a
// class id out of range is a data bug that a silent zero row would hide.
func OneHot(indices *tensor.Tensor, depth int, dt tensor.DType) (*tensor.Tensor, error) {
	in := []*tensor.Tensor{indices}
	if err := checkArity("one_hot", in, 1); err != nil {
		return nil, err
	}
	labels, err := indices.Ints()
	if err != nil {
		return nil, Errorf("one_hot", in, "want int32 or int64 indices")
	}
	if depth < 0 {
		return nil, Errorf("one_hot", in, "negative depth %d", depth)
	}
	out, err := tensor.New(dt, append(indices.Shape().Clone(), depth)...)
	if err != nil {
		return nil, Errorf("one_hot", in, "%v", err)
	}
	for i, l := range labels {
		if l < 0 || l >= depth {
			return nil, Errorf("one_hot", in, "label %d at position %d out of range [0, %d)", l, i, depth)
		}
		out.SetAt(i*depth+l, 1)
	}
	return out, nil
}
