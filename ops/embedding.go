package ops

import (
	"slices"

	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "embedding", Inputs: []string{"table", "ids"}, Grads: []int{0},
		Make: MakeOp(func(a EmbeddingAttrs) Op { return EmbeddingOp(a.PaddingIdx) }), CUDA: DeviceKernel})
}

// EmbeddingAttrs are embedding's attributes: the padding index (negative:
// none), whose row gets no gradient.
type EmbeddingAttrs struct {
	PaddingIdx int `json:"padding_idx"`
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
// The table's gradient touches only the looked-up rows, so the op is a
// SparseGrader for input 0: SparseGrad gives those rows (EmbeddingRows)
// and their gradient, which is how the graph package hands a table
// parameter its gradient without a [V, D] tensor. Backward still returns
// the dense [V, D] gradient, zero in every untouched row, for the plain
// contract (gradient checks, parity goldens, tables that are not
// parameters). Repeated ids add up in both forms, in the order of the ids,
// so the two agree bit for bit.
func EmbeddingOp(padding int) Op { return &embeddingOp{padding: padding} }

// Embedding looks up ids in table; see EmbeddingOp.
func Embedding(table, ids *tensor.Tensor, padding int) (*tensor.Tensor, error) {
	return run(EmbeddingOp(padding), table, ids)
}

// EmbeddingRows returns the distinct table rows, ascending, that an
// embedding lookup of ids with the given padding index reads and whose
// gradient it may make nonzero: the ids other than padding.
func EmbeddingRows(ids *tensor.Tensor, padding int) ([]int, error) {
	if ids == nil {
		return nil, Errorf("embedding", []*tensor.Tensor{ids}, "want int32 or int64 ids, got nil")
	}
	idx, err := ids.Ints()
	if err != nil {
		return nil, Errorf("embedding", []*tensor.Tensor{ids}, "want int32 or int64 ids")
	}
	return embeddingRows(idx, padding), nil
}

// embeddingRows is EmbeddingRows on the ids as ints; idx is not changed.
func embeddingRows(idx []int, padding int) []int {
	rows := slices.DeleteFunc(slices.Clone(idx), func(i int) bool { return i == padding })
	slices.Sort(rows)
	return slices.Compact(rows)
}

// SparseGrader is an optional interface of an Op whose gradient with
// respect to an input is zero outside a few rows (the first axis) of it,
// such as an embedding table's. A caller that keeps gradients sparse (the
// graph package, for parameters) asks SparseGrad instead of Backward for
// that input, and so never builds the mostly-zero dense gradient.
type SparseGrader interface {
	// SparseGrad returns, for input number input and the gradient gout of
	// the output of the op's Forward, the rows of that input whose gradient
	// may be nonzero (unique, ascending) and their gradient values
	// [len(rows), the input's other dims...]: scattered into zeros, they
	// make Backward's dense gradient. ok is false, and the rest nil, when
	// the op has no sparse form for that input.
	SparseGrad(in []*tensor.Tensor, gout *tensor.Tensor, input int) (rows []int, values *tensor.Tensor, ok bool)
}

func (o *embeddingOp) Name() string { return "embedding" }

// Check is embedding's device-free check (Checker): a float table [V, D]
// and int ids; the ids' range is checked where they are read.
func (o *embeddingOp) Check(in []*tensor.Tensor) error {
	if err := checkCount("embedding", in, 2); err != nil {
		return err
	}
	table, ids := in[0], in[1]
	if !table.DType().IsFloat() || table.Rank() != 2 {
		return Errorf("embedding", in, "want a float32 or float64 table [V, D]")
	}
	if ids.DType() != tensor.Int32 && ids.DType() != tensor.Int64 {
		return Errorf("embedding", in, "want int32 or int64 ids")
	}
	return nil
}

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

// SparseGrad gives the table's gradient (input 0) as the looked-up rows,
// ascending and without the padding row, and their summed gradients
// [len(rows), D]; the ids have no gradient. See SparseGrader.
func (o *embeddingOp) SparseGrad(in []*tensor.Tensor, gout *tensor.Tensor, input int) ([]int, *tensor.Tensor, bool) {
	if input != 0 || len(in) != 2 || in[0] == nil {
		return nil, nil, false
	}
	rows := embeddingRows(o.ids, o.padding)
	// pos[j] is the row of the result that id j adds into; -1 (never a
	// position) for the padding id, so embeddingGrad skips it.
	pos := make([]int, len(o.ids))
	for j, i := range o.ids {
		pos[j] = -1
		if i != o.padding {
			pos[j], _ = slices.BinarySearch(rows, i)
		}
	}
	d := in[0].Dim(1)
	g := tensor.Zeros(in[0].DType(), len(rows), d)
	switch g.DType() {
	case tensor.Float32:
		embeddingGrad(gout.Float32s(), g.Float32s(), pos, -1, d)
	case tensor.Float64:
		embeddingGrad(gout.Float64s(), g.Float64s(), pos, -1, d)
	}
	return rows, g, true
}
