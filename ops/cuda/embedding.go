//go:build cuda

package cuda

import (
	"slices"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// embeddingLauncher is one application of ops.EmbeddingOp(padding) on the device:
// table [V, D] on the device and ids (int32 or int64, any shape) on the
// host give [ids..., D], row ids[i] of the table for each id, zeros for
// the padding id. The ids are checked on the host, as ops does, and kept
// there for the backward pass, whose plan (which gradient rows add into
// which table row) is made on the host too.
//
// The table's gradient is sparse: SparseGrad returns only the rows the ids
// touched, unique and ascending without the padding row, and their summed
// gradients, as ops' SparseGrad and graph.SparseRows represent it; Backward
// returns the dense [V, D] gradient. Repeated ids add up in the order of
// the ids, as ops does, so both forms match the CPU kernel bit for bit.
type embeddingLauncher struct {
	d       *Device
	padding int

	// Saved by Forward.
	ids   []int
	idt   *tensor.Tensor
	table *Buffer
}

// embeddingOp returns the op of ops.EmbeddingOp(padding) on the device; a
// negative padding (ops.NoPadding) means none.
func (d *Device) embeddingOp(padding int) *embeddingLauncher {
	return &embeddingLauncher{d: d, padding: padding}
}

// Forward looks up ids in table; see Embedding.
func (o *embeddingLauncher) Forward(table *Buffer, ids *tensor.Tensor) (*Buffer, error) {
	const op = "embedding"
	in := []*Buffer{table}
	if err := o.d.checkInputs(op, in...); err != nil {
		return nil, err
	}
	idx, err := ids.Ints() // the table's rank and the ids' dtype were checked by ops.Dispatch (embeddingOp.Check)
	if err != nil {
		return nil, err
	}
	v, dim := table.shape[0], table.shape[1]
	src := make([]int64, len(idx))
	for j, i := range idx {
		if i < 0 || i >= v {
			return nil, opError(op, in, "id %d at position %d out of range [0, %d)", i, j, v)
		}
		src[j] = int64(i)
		if i == o.padding {
			src[j] = -1
		}
	}
	o.ids, o.idt, o.table = idx, ids.Clone(), table
	d := o.d
	var out *Buffer
	err = d.do(func() error {
		var err error
		if out, err = d.newBuffer(tensor.Float32, append(ids.Shape().Clone(), dim)); err != nil {
			return err
		}
		return d.gatherRows(table, out, src, dim)
	})
	return done(out, err)
}

// plan returns the touched rows and the CSR plan of which gradient rows
// add into each, after checking gout against the lookup's output.
func (o *embeddingLauncher) plan(gout *Buffer) (rows []int, seg, list []int64, err error) {
	const op = "embedding"
	in := []*Buffer{o.table, gout}
	if err := o.d.checkInputs(op, in...); err != nil {
		return nil, nil, nil, err
	}
	if rows, err = ops.EmbeddingRows(o.idt, o.padding); err != nil {
		return nil, nil, nil, err
	}
	pos := make([]int, len(o.ids))
	for j, i := range o.ids {
		pos[j] = -1
		if i != o.padding {
			pos[j], _ = slices.BinarySearch(rows, i)
		}
	}
	seg, list = segments(pos, len(rows))
	return rows, seg, list, nil
}

// SparseGrad returns the table's gradient for the upstream gradient gout
// [ids..., D] as the rows the lookup touched (unique, ascending, without
// the padding row) and their summed gradients [len(rows), D], without a
// [V, D] buffer.
func (o *embeddingLauncher) SparseGrad(gout *Buffer) (rows []int, values *Buffer, err error) {
	rows, seg, list, err := o.plan(gout)
	if err != nil {
		return nil, nil, err
	}
	d, dim := o.d, o.table.shape[1]
	err = d.do(func() error {
		var err error
		if values, err = d.newBuffer(tensor.Float32, tensor.Shape{len(rows), dim}); err != nil {
			return err
		}
		return d.sumRows(gout, values, seg, list, nil, dim)
	})
	if values, err = done(values, err); err != nil {
		return nil, nil, err
	}
	return rows, values, nil
}

// Backward returns the dense gradient [V, D] of the table for the
// upstream gradient gout: SparseGrad's rows in place, zeros elsewhere.
func (o *embeddingLauncher) Backward(gout *Buffer) (*Buffer, error) {
	rows, seg, list, err := o.plan(gout)
	if err != nil {
		return nil, err
	}
	d, dim := o.d, o.table.shape[1]
	var g *Buffer
	err = d.do(func() error {
		var err error
		if g, err = d.newBuffer(tensor.Float32, o.table.shape); err != nil {
			return err
		}
		if err := d.zero(g); err != nil {
			return err
		}
		return d.sumRows(gout, g, seg, list, int64s(rows), dim)
	})
	return done(g, err)
}
