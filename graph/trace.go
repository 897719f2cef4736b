package graph

import (
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// TraceFunc observes one op that Tape.Apply ran: the op (the kernel that
// ran, which is the op itself for host inputs), its input tensors and its
// output. in is the tape's own slice, valid only during the call: a
// tracer that keeps the inputs copies the slice.
type TraceFunc func(op ops.Op, in []*tensor.Tensor, out *tensor.Tensor)

// SetTrace makes every later successful Apply on the tape call f after
// the op's Forward, in the order the ops run; nil stops tracing. It is the
// hook by which package infer captures a model's forward pass into a
// static plan (run the model once on an eval tape with a tracer, as
// torch.jit.trace does); the tape records, frees and releases exactly as
// without it. A failed op is not reported: its error comes out of the
// tape as usual.
func (t *Tape) SetTrace(f TraceFunc) {
	if t != nil {
		t.trace = f
	}
}
