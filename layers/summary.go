package layers

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// Name is a layer's name: the common prefix of its parameters' names (the
// name it was built with, "conv1" for conv1/kernel and conv1/bias), or ""
// for a layer without parameters.
func Name(m Module) string {
	if isNil(m) {
		return ""
	}
	var prefix []string
	for i, p := range m.Params() {
		if p == nil {
			continue
		}
		dir := strings.Split(p.Name, "/")
		dir = dir[:len(dir)-1]
		if i == 0 || prefix == nil {
			prefix = dir
			continue
		}
		n := 0
		for n < len(prefix) && n < len(dir) && prefix[n] == dir[n] {
			n++
		}
		prefix = prefix[:n]
	}
	return strings.Join(prefix, "/")
}

// isNil reports whether m is a nil interface or a nil pointer.
func isNil(m Module) bool {
	if m == nil {
		return true
	}
	v := reflect.ValueOf(m)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// out finishes a layer's call: when the call failed in the layer (in, the
// error its inputs carried, is nil but out's is not), it returns a value
// failing with out's error prefixed by the layer's kind and name, so that
// an op error raised inside a model says which layer raised it, as well as
// the op and shapes the op's own error names; and on a tape Summary is
// watching, it records the call.
func out(kind string, m Module, in error, v *graph.Value) *graph.Value {
	t := v.Tape()
	if err := v.Err(); err != nil && in == nil {
		v = t.Fail(fmt.Errorf("layers: %s %q: %w", kind, Name(m), err))
	}
	if r, ok := watching.Load(t); ok && t != nil {
		r.(*recorder).add(kind, m, v.Shape())
	}
	return v
}

// outSeq is out for a layer that returns a ragged batch.
func outSeq(kind string, m Module, in error, s graph.Seq) graph.Seq {
	return s.With(out(kind, m, in, s.Values))
}

// firstErr is the first error the values carry (nil values count as none:
// optional inputs).
func firstErr(vs ...*graph.Value) error {
	for _, v := range vs {
		if v != nil {
			if err := v.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// watching maps a tape Summary runs a forward pass on to its recorder.
var watching sync.Map

// recorder collects the layer calls of one forward pass.
type recorder struct {
	mu   sync.Mutex
	rows []*summaryRow
	seen map[Module]*summaryRow
}

type summaryRow struct {
	kind, name string
	shape      tensor.Shape // of the first call's output
	params     int64
	calls      int
	m          Module
}

func (r *recorder) add(kind string, m Module, shape tensor.Shape) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if row, ok := r.seen[m]; ok && m != nil {
		row.calls++
		return
	}
	row := &summaryRow{kind: kind, name: Name(m), shape: shape, calls: 1, m: m}
	if m != nil {
		row.params = countParams(m.Params())
	}
	r.rows = append(r.rows, row)
	if m != nil {
		r.seen[m] = row
	}
}

// countParams is the number of elements of ps.
func countParams(ps []*graph.Param) int64 {
	var n int64
	for _, p := range ps {
		if p != nil && p.Value != nil {
			n += int64(p.Value.Size())
		}
	}
	return n
}

// Summary describes a model as Keras's model.summary() does: forward runs
// the model once on an example input on the eval tape it is given (output
// shapes need a forward pass), and every layer the pass called is a row,
// in call order: its name (Name), kind, output shape (of its first call,
// with the batch axis as the example has it) and parameter count, and how
// many times it ran when more than once (a cell run per step). Then the
// total of model's parameters, trainable and not, and those of model that
// the pass did not use. Layers report their calls themselves: Linear,
// Conv2D, BatchNorm, LayerNorm, Embedding, LSTM, GRU, ProjectedLSTM,
// SequenceConv and MultiHeadAttention, and the layers of a Sequential. The
// error is forward's (a failed output names the layer that failed).
func Summary(model Module, forward func(t *graph.Tape) *graph.Value) (string, error) {
	if isNil(model) || forward == nil {
		return "", errors.New("layers: Summary needs a model and a forward pass")
	}
	t := graph.NewEvalTape()
	defer t.Release()
	rec := &recorder{seen: map[Module]*summaryRow{}}
	watching.Store(t, rec)
	defer watching.Delete(t)
	y := forward(t)
	if err := y.Err(); err != nil {
		return "", fmt.Errorf("layers: Summary: the forward pass: %w", err)
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "layer\tkind\toutput shape\tparams")
	used := map[*graph.Param]bool{}
	for _, row := range rec.rows {
		name, calls := row.name, ""
		if name == "" {
			name = "-"
		}
		if row.calls > 1 {
			calls = fmt.Sprintf(" ×%d", row.calls)
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%v\t%d\n", name, row.kind, calls, row.shape, row.params)
		if row.m != nil {
			for _, p := range row.m.Params() {
				used[p] = true
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return "", err
	}
	all := model.Params()
	var trainable, unused int64
	for _, p := range all {
		if p == nil || p.Value == nil {
			continue
		}
		if p.Trainable {
			trainable += int64(p.Value.Size())
		}
		if !used[p] {
			unused += int64(p.Value.Size())
		}
	}
	total := countParams(all)
	fmt.Fprintf(&b, "output %v\ntotal params: %d (trainable %d, non-trainable %d)\n", y.Shape(), total, trainable, total-trainable)
	if unused > 0 {
		fmt.Fprintf(&b, "params the pass did not reach through a layer above: %d\n", unused)
	}
	return b.String(), nil
}
