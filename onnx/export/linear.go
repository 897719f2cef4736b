package export

import (
	"fmt"
)

// linear (x·W + b) and linear_concat ([a, b]·W + bias): Gemm for a 2-D
// input, MatMul then Add for the rows of a ragged batch ([batch, seq, in]
// against W [in, out]; MatMul broadcasts).
func init() {
	register("linear", func(e *exporter, c call) (*val, error) {
		return e.linear(c.vs[0], c.vs[1:], c.out.Rank())
	})
	register("linear_concat", func(e *exporter, c call) (*val, error) {
		a, b := c.vs[0], c.vs[1]
		if a.seq != b.seq || a.batch != b.batch {
			return nil, fmt.Errorf("inputs a and b are batched differently; expected rows of one batch")
		}
		x := &val{name: e.apply("Concat", []string{a.name, b.name}, attrInt("axis", -1)), batch: a.batch, seq: a.seq}
		return e.linear(x, c.vs[2:], c.out.Rank())
	})
}

// linear writes x·w (+ bias) for wb = [w] or [w, bias], both constants.
func (e *exporter) linear(x *val, wb []*val, rank int) (*val, error) {
	for _, v := range wb {
		if !v.konst {
			return nil, fmt.Errorf("the weights are computed from the inputs; expected constant weights")
		}
	}
	out := &val{batch: x.batch, seq: x.seq}
	names := []string{x.name}
	for _, v := range wb {
		names = append(names, v.name)
	}
	if x.seq == nil && rank == 2 {
		out.name = e.apply("Gemm", names)
		return out, nil
	}
	out.name = e.apply("MatMul", names[:2])
	if len(wb) == 2 {
		out.name = e.apply("Add", []string{out.name, names[2]})
	}
	return out, nil
}
