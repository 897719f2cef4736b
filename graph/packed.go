package graph

import "github.com/plumbml/plumb/ops"

// packing is the state of one parameter's weights on an inference tape:
// how often Linear or GRUCell used them this step, and their packing once
// made.
type packing struct {
	uses int
	w    *ops.PackedWeights
}

// packed returns w's weights packed for the GEMM (Linear, GRUCell) when
// t is an inference tape, w is a host parameter on it and this is at
// least its second use in the step; nil otherwise. The first use is left
// unpacked, so that a one-off product (batch-1 inference through a fresh
// tape) does not pay for a packing it reads once.
func (t *Tape) packed(w *Value) *ops.PackedWeights {
	if t == nil || t.grad || w == nil || w.err != nil || w.tape != t || w.param == nil || w.t == nil ||
		w.t.Storage() != nil || w.t.Rank() != 2 || w.gen != t.gen {
		return nil
	}
	if t.packs == nil {
		t.packs = map[*Param]*packing{}
	}
	p := t.packs[w.param]
	if p == nil {
		p = &packing{}
		t.packs[w.param] = p
	}
	p.uses++
	if p.uses < 2 {
		return nil
	}
	if p.w == nil {
		pw, err := ops.PackWeights(w.t)
		if err != nil {
			return nil // Linear's own op reports what is wrong
		}
		p.w = pw
	}
	return p.w
}
