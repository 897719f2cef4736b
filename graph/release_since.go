package graph

import (
	"errors"
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// Mark returns how many values the tape has made in this step, for
// ReleaseSince.
func (t *Tape) Mark() int {
	if t == nil {
		return 0
	}
	return len(t.values)
}

// ReleaseSince ends, on a tape that does not record, the values made
// since mark (from Mark) other than keep's and the tape's parameters, as
// Release ends a whole step: their storage goes back to tensor's pool now
// unless a value made before mark, a kept value or a tensor handed to the
// caller shares it, and using one afterwards is an error. A loop of many
// steps on one inference tape (the decoder steps of a beam search, which
// carry only their state from one step to the next) then holds one step's
// values instead of every step's until Release. A recording tape refuses:
// its Backward may still need them.
func (t *Tape) ReleaseSince(mark int, keep ...*Value) error {
	switch {
	case t == nil:
		return errors.New("graph: ReleaseSince on a nil tape")
	case t.grad:
		return errors.New("graph: ReleaseSince on a tape that records (Backward may still need its values)")
	case mark < 0 || mark > len(t.values):
		return fmt.Errorf("graph: ReleaseSince mark %d outside the %d values of this step", mark, len(t.values))
	}
	alive := make(map[*Value]bool, len(keep))
	for _, v := range keep {
		alive[v] = true
	}
	var rec tensor.Recycler
	for _, v := range t.values[:mark] {
		rec.Keep(v.t)
	}
	for _, x := range t.keep {
		rec.Keep(x)
	}
	for _, x := range t.moved {
		rec.Keep(x)
	}
	live := t.values[:mark]
	for _, v := range t.values[mark:] {
		switch {
		case alive[v] || v.param != nil:
			rec.Keep(v.t)
			live = append(live, v)
			continue
		case v.kept || !v.made:
			rec.Keep(v.t)
		default:
			rec.Add(v.t)
		}
		v.gen = t.gen - 1 // never the tape's step again: the value reads as released
	}
	clear(t.values[len(live):])
	t.values = live
	rec.Reclaim()
	return nil
}
