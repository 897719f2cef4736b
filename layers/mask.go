package layers

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// Unpad returns the real steps of a padded batch x [B, T, D] as a ragged
// batch: sequence b is rows 0..lengths[b]-1 of x[b]. It is the inverse of
// graph.PadSeq (which pads a ragged batch for the attention layers and
// returns the lengths that their ops.AttentionAttrs.KeyLengths take); it
// gathers the rows, so gradients flow back to x.
func Unpad(x *graph.Value, lengths []int) graph.Seq {
	t := x.Tape()
	if t == nil {
		return graph.Seq{Values: noTape("unpad", x)}
	}
	s := x.Shape()
	if s == nil {
		return graph.Seq{Values: x}
	}
	if len(s) != 3 || len(lengths) != s[0] {
		return graph.Seq{Values: t.Fail(fmt.Errorf("layers: Unpad of x %v with %d lengths; want [B, T, D] and B lengths", s, len(lengths)))}
	}
	offsets := make([]int, len(lengths)+1)
	var idx []int64
	for b, l := range lengths {
		if l < 0 || l > s[1] {
			return graph.Seq{Values: t.Fail(fmt.Errorf("layers: Unpad: length %d of sequence %d outside [0, %d]", l, b, s[1]))}
		}
		offsets[b+1] = offsets[b] + l
		for j := range l {
			idx = append(idx, int64(b*s[1]+j))
		}
	}
	ix := tensor.MustFromSlice(idx, len(idx))
	if dev := x.Device(); dev != nil {
		var err error
		if ix, err = t.Move(ix, dev); err != nil {
			return graph.Seq{Values: t.Fail(fmt.Errorf("layers: Unpad: %w", err))}
		}
	}
	return graph.NewSeq(graph.Gather(graph.Reshape(x, s[0]*s[1], s[2]), ix, 0), offsets)
}

// constOn returns x as a constant on like's tape, moved to like's device
// when like is on one (the ops of a step take inputs on one device).
func constOn(like *graph.Value, x *tensor.Tensor) *graph.Value {
	t := like.Tape()
	if dev := like.Device(); dev != nil {
		moved, err := t.Move(x, dev)
		if err != nil {
			return t.Fail(fmt.Errorf("layers: %w", err))
		}
		x = moved
	}
	return t.Const(x)
}
