package ops

import (
	"slices"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "embedding", Inputs: []string{"table", "ids"}, Grads: []int{0}})
}

// NoPadding is the padding index of an embedding without one.
const NoPadding = -1

type embeddingOp struct {
	padding int
	ids     []int // Forward's validated ids, for Backward
}

// EmbeddingOp returns the lookup-table op: table [V, D] (float) and ids
// (int32 or int64, any shape) give [ids..., D], row ids[i] of the table for
// each id (Paddle's lookup_table_v2, tf.nn.embedding_lookup, Keras
// Embedding). An id outside [0, V) is an error naming it. If padding is in
// [0, V) (paddingIdx of Paddle and PyTorch; pass NoPadding, or any negative
// value, for none: negative indices do not count from the end), ids equal
// to it output zeros and send no gradient to their row.
//
// The gradient is sparse in nature, touching only the looked-up rows
// (EmbeddingRows lists them), but the tape accumulates dense tensors, so
// Backward returns the dense [V, D] gradient with zeros in every untouched
// row; repeated ids add up. An optimizer that wants to update only the
// touched rows may restrict itself to EmbeddingRows(ids, padding).
func EmbeddingOp(padding int) Op { return &embeddingOp{padding: padding} }

// Embedding looks up ids in table; see EmbeddingOp.
func Embedding(table, ids *tensor.Tensor, padding int) (*tensor.Tensor, error) {
	return run(EmbeddingOp(padding), table, ids)
}

// EmbeddingRows returns the distinct table rows, ascending, that an
// embedding lookup of ids with the given padding index reads and whose
// gradient it may make nonzero: the ids other than padding.
func EmbeddingRows(ids *tensor.Tensor, padding int) ([]int, error) {
	idx, err := ids.Ints()
	if err != nil {
		return nil, Errorf("embedding", []*tensor.Tensor{ids}, "want int32 or int64 ids")
	}
	idx = slices.DeleteFunc(slices.Clone(idx), func(i int) bool { return i == padding })
	slices.Sort(idx)
	return slices.Compact(idx), nil
}

func (o *embeddingOp) Name() string { return "embedding" }

func (o *embeddingOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkArity("embedding", in, 2); err != nil {
		return nil, err
	}
	table, ids := in[0], in[1]
	if !table.DType().IsFloat() || table.Rank() != 2 {
		return nil, Errorf("embedding", in, "want a float32 or float64 table [V, D]")
	}
	idx, err := ids.Ints()
	if err != nil {
		return nil, Errorf("embedding", in, "want int32 or int64 ids")
	}
	v, d := table.Dim(0), table.Dim(1)
	for j, i := range idx {
		if i < 0 || i >= v {
			return nil, Errorf("embedding", in, "id %d at position %d out of range [0, %d)", i, j, v)
		}
	}
	o.ids = idx
	out := tensor.Zeros(table.DType(), append(ids.Shape().Clone(), d)...)
	switch table.DType() {
	case tensor.Float32:
		embeddingKernel(table.Float32s(), out.Float32s(), idx, o.padding, d)
	case tensor.Float64:
		embeddingKernel(table.Float64s(), out.Float64s(), idx, o.padding, d)
	}
	return out, nil
}

// embeddingKernel copies row ids[j] of table [V, d] into row j of out,
// leaving the padding id's rows zero.
func embeddingKernel[T tensor.Float](table, out []T, ids []int, padding, d int) {
	for j, i := range ids {
		if i != padding {
			copy(out[j*d:(j+1)*d], table[i*d:(i+1)*d])
		}
	}
}

func (o *embeddingOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	grads := make([]*tensor.Tensor, 2)
	if !need[0] {
		return grads, nil
	}
	g := tensor.ZerosLike(in[0])
	d := in[0].Dim(1)
	switch g.DType() {
	case tensor.Float32:
		embeddingGrad(gout.Float32s(), g.Float32s(), o.ids, o.padding, d)
	case tensor.Float64:
		embeddingGrad(gout.Float64s(), g.Float64s(), o.ids, o.padding, d)
	}
	grads[0] = g
	return grads, nil
}

// embeddingGrad adds row j of gout into row ids[j] of g, except for the
// padding id.
func embeddingGrad[T tensor.Float](gout, g []T, ids []int, padding, d int) {
	for j, i := range ids {
		if i == padding {
			continue
		}
		dst := g[i*d : (i+1)*d]
		for k, v := range gout[j*d : (j+1)*d] {
			dst[k] += v
		}
	}
}
