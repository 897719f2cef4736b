package data

import (
	"fmt"
	"iter"
	"math/rand/v2"

	"github.com/plumbml/plumb/tensor"
)

// Dataset is an in-memory set of examples: Images holds them along axis 0
// (for MNIST, float32 [N, 1, 28, 28]) and Labels holds their targets along
// axis 0 (for MNIST, int64 [N]).
type Dataset struct {
	images, labels *tensor.Tensor
}

// Batch is one mini-batch: the first axis of both tensors is the batch.
type Batch struct {
	Images, Labels *tensor.Tensor
}

// NewDataset pairs images and labels; both need rank >= 1 and the same
// number of examples (dim 0). The tensors are kept, not copied.
func NewDataset(images, labels *tensor.Tensor) (*Dataset, error) {
	if images == nil || labels == nil {
		return nil, fmt.Errorf("data: dataset needs both images and labels")
	}
	if images.Rank() < 1 || labels.Rank() < 1 {
		return nil, fmt.Errorf("data: dataset of images %v and labels %v: both need an example axis", images.Shape(), labels.Shape())
	}
	if images.Dim(0) != labels.Dim(0) {
		return nil, fmt.Errorf("data: %d images (shape %v) but %d labels (shape %v)", images.Dim(0), images.Shape(), labels.Dim(0), labels.Shape())
	}
	return &Dataset{images: images, labels: labels}, nil
}

// Len is the number of examples (0 for a nil or zero Dataset).
func (d *Dataset) Len() int {
	if d == nil || d.images == nil || d.images.Rank() == 0 {
		return 0
	}
	return d.images.Dim(0)
}

// Images returns all examples, [N, ...]. The caller must not modify it.
func (d *Dataset) Images() *tensor.Tensor { return d.images }

// Labels returns all targets, [N, ...]. The caller must not modify it.
func (d *Dataset) Labels() *tensor.Tensor { return d.labels }

// Take returns the first n examples (all when n >= Len, none when n <= 0)
// as views that share storage with d, for quick runs on a small slice.
func (d *Dataset) Take(n int) *Dataset {
	if d.Len() == 0 {
		return d
	}
	n = max(0, min(n, d.Len()))
	return &Dataset{images: rows(d.images, 0, n), labels: rows(d.labels, 0, n)}
}

// Subset returns a copy holding the examples at idx, in that order
// (repeats allowed). An index outside [0, Len) is an error.
func (d *Dataset) Subset(idx []int) (*Dataset, error) {
	if d == nil || d.images == nil || d.labels == nil {
		return nil, fmt.Errorf("data: Subset of a nil or zero Dataset (build it with NewDataset)")
	}
	for i, j := range idx {
		if j < 0 || j >= d.Len() {
			return nil, fmt.Errorf("data: subset index %d at position %d outside [0, %d)", j, i, d.Len())
		}
	}
	return &Dataset{images: gather(d.images, idx), labels: gather(d.labels, idx)}, nil
}

// Batches iterates over d in mini-batches of size examples; every example
// appears exactly once per pass, and the last batch holds the remainder
// (Len mod size examples) when size does not divide Len, so no example is
// dropped. With a nil rng the order is 0..Len-1 and the batches are views
// sharing storage with d; with an rng, each pass (each range over the
// returned sequence) draws a fresh permutation from rng, so one seed gives
// one sequence of epochs, and the batches are copies. A size below 1
// yields no batches.
func (d *Dataset) Batches(size int, rng *rand.Rand) iter.Seq[Batch] {
	return func(yield func(Batch) bool) {
		if size < 1 {
			return
		}
		n := d.Len()
		var perm []int
		if rng != nil {
			perm = rng.Perm(n)
		}
		for from := 0; from < n; from += size {
			to := min(from+size, n)
			var b Batch
			if perm == nil {
				b = Batch{Images: rows(d.images, from, to), Labels: rows(d.labels, from, to)}
			} else {
				b = Batch{Images: gather(d.images, perm[from:to]), Labels: gather(d.labels, perm[from:to])}
			}
			if !yield(b) {
				return
			}
		}
	}
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

// gather copies the rows of t at idx (each within [0, t.Dim(0))) into a new
// tensor [len(idx), ...].
func gather(t *tensor.Tensor, idx []int) *tensor.Tensor {
	shape := t.Shape().Clone()
	shape[0] = len(idx)
	out := tensor.Zeros(t.DType(), shape...)
	row := t.Shape()[1:].Size()
	switch t.DType() {
	case tensor.Float32:
		gatherRows(tensor.Data[float32](out), tensor.Data[float32](t), idx, row)
	case tensor.Float64:
		gatherRows(tensor.Data[float64](out), tensor.Data[float64](t), idx, row)
	case tensor.Int32:
		gatherRows(tensor.Data[int32](out), tensor.Data[int32](t), idx, row)
	case tensor.Int64:
		gatherRows(tensor.Data[int64](out), tensor.Data[int64](t), idx, row)
	}
	return out
}

func gatherRows[T tensor.Elem](dst, src []T, idx []int, row int) {
	for i, j := range idx {
		copy(dst[i*row:(i+1)*row], src[j*row:(j+1)*row])
	}
}
