package transformer

import (
	"errors"
	"fmt"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/tensor"
)

// Loss returns the label-smoothed cross-entropy (layers.
// LabelSmoothedCrossEntropy with eps; Szegedy et al. 2016, as Vaswani et
// al. 2017 section 5.4 train with 0.1), averaged over the target tokens,
// of predicting out (each row's target and end mark) from in (the start
// mark and the target) under teacher forcing, given the sources src, and
// the number of target tokens. The targets are padded to the longest, and
// only the real positions go through the output projection.
func (m *Model) Loss(t *graph.Tape, src, in, out [][]int, eps float64) (*graph.Value, int) {
	if t == nil {
		return t.Fail(errors.New("transformer: Loss: nil tape")), 0
	}
	if len(src) == 0 || len(in) != len(src) || len(out) != len(src) {
		return t.Fail(fmt.Errorf("transformer: Loss: %d sources, %d decoder inputs and %d targets; want the same number, at least 1", len(src), len(in), len(out))), 0
	}
	tk := 0
	for i := range in {
		if len(in[i]) == 0 || len(in[i]) != len(out[i]) {
			return t.Fail(fmt.Errorf("transformer: Loss: row %d has %d decoder inputs and %d targets; want the same number, at least 1", i, len(in[i]), len(out[i]))), 0
		}
		tk = max(tk, len(in[i]))
	}
	memory, lengths := m.Encode(t, src)
	padded := make([][]int, len(in))
	var rows, labels []int64
	for i, r := range in {
		padded[i] = append(append(make([]int, 0, tk), r...), make([]int, tk-len(r))...)
		for j, id := range out[i] {
			rows, labels = append(rows, int64(i*tk+j)), append(labels, int64(id))
		}
	}
	y := m.decodeStates(padded, memory, lengths)
	y = graph.Reshape(y, len(in)*tk, m.Cfg.DModel)
	y = graph.Gather(y, tensor.MustFromSlice(rows, len(rows)), 0)
	logits := m.output(y)
	return layers.LabelSmoothedCrossEntropy(logits, tensor.MustFromSlice(labels, len(labels)), eps), len(labels)
}

// BatchLoss is Loss over a batch of Dataset's fields.
func (m *Model) BatchLoss(t *graph.Tape, b *data.Batch, eps float64) (*graph.Value, int) {
	if b == nil {
		return t.Fail(errors.New("transformer: BatchLoss: nil batch")), 0
	}
	src, err := rows(b.Ragged("src"))
	if err != nil {
		return t.Fail(fmt.Errorf("transformer: batch field src: %w", err)), 0
	}
	in, err := rows(b.Ragged("trg"))
	if err != nil {
		return t.Fail(fmt.Errorf("transformer: batch field trg: %w", err)), 0
	}
	out, err := rows(b.Ragged("trg_next"))
	if err != nil {
		return t.Fail(fmt.Errorf("transformer: batch field trg_next: %w", err)), 0
	}
	return m.Loss(t, src, in, out, eps)
}

// rows is a ragged batch of int64 ids as one slice of ints a row.
func rows(r *tensor.Ragged) ([][]int, error) {
	if r == nil || r.Values == nil {
		return nil, errors.New("missing")
	}
	if r.Values.DType() != tensor.Int64 || r.Values.Rank() != 1 {
		return nil, fmt.Errorf("%v%v; want int64 ids, one a row", r.Values.DType(), r.Values.Shape())
	}
	v := r.Values.Int64s()
	out := make([][]int, r.BatchSize())
	for i := range out {
		row := v[r.Offsets[i]:r.Offsets[i+1]]
		out[i] = make([]int, len(row))
		for j, id := range row {
			out[i][j] = int(id)
		}
	}
	return out, nil
}
