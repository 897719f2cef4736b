package export

import (
	"fmt"

	"github.com/plumbml/plumb/ops"
)

// Reshape, Concat, Slice and the embedding lookup (Gather).
func init() {
	register("reshape", func(e *exporter, c call) (*val, error) {
		v := c.vs[0]
		if v.seq != nil {
			return nil, fmt.Errorf("reshapes the rows of a ragged batch; expected a dense tensor")
		}
		shape := make([]int64, c.out.Rank())
		for i, d := range c.out.Shape() {
			shape[i] = int64(d)
		}
		if v.batch {
			if c.out.Rank() == 0 || c.out.Dim(0) != c.in[0].Dim(0) {
				return nil, fmt.Errorf("reshapes the batch dimension into %v; expected dimension 0, the batch, kept", c.out.Shape())
			}
			shape[0] = 0 // Reshape copies a 0 from the input's dims (allowzero 0)
		}
		return &val{batch: v.batch, name: e.apply("Reshape", []string{v.name, e.ints64(shape...)})}, nil
	})
	register("concat", func(e *exporter, c call) (*val, error) {
		first := c.vs[0]
		names := make([]string, len(c.vs))
		for i, v := range c.vs {
			if v.seq != first.seq || v.batch != first.batch {
				return nil, fmt.Errorf("input %d is batched differently from input 0; expected every input batched alike", i)
			}
			names[i] = v.name
		}
		axis, err := axisOf(first, c.attrs().(ops.ConcatAttrs).Axis, c.out.Rank())
		if err != nil {
			return nil, err
		}
		if first.batch && axis == 0 {
			return nil, fmt.Errorf("concatenates along the batch; expected an axis within a row")
		}
		return &val{batch: first.batch, seq: first.seq, name: e.apply("Concat", names, attrInt("axis", axis))}, nil
	})
	register("slice", func(e *exporter, c call) (*val, error) {
		a := c.attrs().(ops.SliceAttrs)
		v := c.vs[0]
		if v.hc {
			// A fused LSTM's [h, c] rows: the h columns are ONNX LSTM's Y.
			h := c.in[0].Dim(1) / 2
			if a.Axis != 1 && a.Axis != -1 || a.Begin != 0 || a.End != h {
				return nil, fmt.Errorf("slices [%d, %d) of axis %d of a fused LSTM's [h, c] rows; expected the h columns [0, %d), since ONNX's LSTM outputs c' only for the last step", a.Begin, a.End, a.Axis, h)
			}
			return &val{name: v.name, seq: v.seq}, nil
		}
		axis, err := axisOf(v, a.Axis, c.in[0].Rank())
		if err != nil {
			return nil, err
		}
		if v.batch && axis == 0 {
			return nil, fmt.Errorf("slices the batch; expected an axis within a row")
		}
		name := e.apply("Slice", []string{v.name, e.ints64(int64(a.Begin)), e.ints64(int64(a.End)), e.ints64(axis)})
		return &val{batch: v.batch, seq: v.seq, name: name}, nil
	})
	register("embedding", func(e *exporter, c call) (*val, error) {
		table, ids := c.vs[0], c.vs[1]
		if !table.konst {
			return nil, fmt.Errorf("the table is computed from the inputs; expected a constant")
		}
		name := table.name
		if p := c.attrs().(ops.EmbeddingAttrs).PaddingIdx; p >= 0 && p < c.in[0].Dim(0) {
			// The padding id looks up zeros: Gather from a copy of the table
			// with that row zeroed.
			t := c.in[0].Clone()
			row, err := t.SliceRows(p, p+1)
			if err != nil {
				return nil, err
			}
			row.Fill(0)
			name = e.constant(t)
		}
		return &val{batch: ids.batch, seq: ids.seq, name: e.apply("Gather", []string{name, ids.name}, attrInt("axis", 0))}, nil
	})
}
