// Package graph is Plumb's define-by-run reverse-mode autodiff.
//
// A Tape records each op as it runs on Values; Backward walks the record in
// reverse and hands each op its output's gradient. Nothing is fixed ahead of
// time, so every batch may have its own shapes and sequence lengths
// (PyTorch's eager mode, Paddle's LoDTensor; Spago's ag package is the model
// for the size of this core).
//
// Errors are values (Rob Pike): an op that fails returns a Value carrying
// its error, every op given a failed Value returns a failed Value without
// computing, and the first error, naming the op and the shapes, comes out of
// Backward, Value.Tensor or Tape.Err. So model code reads like the math and
// still never panics on a user's mistake.
//
// A Tape is not safe for concurrent use; use one tape per goroutine.
package graph

import (
	"errors"
	"fmt"
	"slices"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// Tape records the ops of one forward pass.
type Tape struct {
	nodes    []*node
	vars     []*Value // every value that takes part in backward
	params   map[*Param]*Value
	training bool
	grad     bool
	err      error
}

type node struct {
	op  ops.Op
	in  []*Value
	out *Value
}

// NewTape returns a tape in training mode that records for Backward.
func NewTape() *Tape {
	return &Tape{params: map[*Param]*Value{}, training: true, grad: true}
}

// NewEvalTape returns a tape in inference mode (dropout off, batch norm on
// its running statistics) that records nothing for Backward.
func NewEvalTape() *Tape {
	return &Tape{params: map[*Param]*Value{}}
}

// Training reports whether layers should behave as in training.
func (t *Tape) Training() bool { return t.training }

// SetTraining switches layers between training and inference behaviour.
func (t *Tape) SetTraining(on bool) { t.training = on }

// Recording reports whether ops are recorded for Backward.
func (t *Tape) Recording() bool { return t.grad }

// SetRecording turns recording for Backward on or off (off is no-grad mode:
// values computed meanwhile have no gradient and cost no tape memory).
func (t *Tape) SetRecording(on bool) { t.grad = on }

// Err returns the first error of any op on this tape.
func (t *Tape) Err() error { return t.err }

func (t *Tape) fail(err error) *Value {
	if t != nil && t.err == nil {
		t.err = err
	}
	return &Value{tape: t, err: err}
}

// Fail returns a failed value carrying err, for layers and helpers that
// detect a mistake before any op runs.
func (t *Tape) Fail(err error) *Value { return t.fail(err) }

// Const wraps a tensor as a value that needs no gradient.
func (t *Tape) Const(x *tensor.Tensor) *Value {
	if x == nil {
		return t.fail(errors.New("graph: Const of a nil tensor"))
	}
	return &Value{tape: t, t: x}
}

// Var wraps a tensor as a leaf whose gradient Backward computes; read it
// with Value.Grad.
func (t *Tape) Var(x *tensor.Tensor) *Value {
	v := t.Const(x)
	if v.err == nil && t.grad {
		if !x.DType().IsFloat() {
			return t.fail(fmt.Errorf("graph: Var of a %v tensor; only float tensors have gradients", x.DType()))
		}
		v.requiresGrad = true
		t.vars = append(t.vars, v)
	}
	return v
}

// Param returns the tape's leaf for p. Backward adds the leaf's gradient
// into p's (p.Grad, or p.SparseGrad; see Param). Repeated calls return the
// same leaf.
func (t *Tape) Param(p *Param) *Value {
	if v, ok := t.params[p]; ok {
		return v
	}
	var v *Value
	if p.Trainable {
		v = t.Var(p.Value)
	} else {
		v = t.Const(p.Value)
	}
	v.param = p
	t.params[p] = v
	return v
}

// apply runs op on the tape of its first non-nil input.
func apply(op ops.Op, in ...*Value) *Value {
	for _, v := range in {
		if v != nil {
			return v.tape.Apply(op, in...)
		}
	}
	return &Value{err: fmt.Errorf("%s: all inputs are nil values", op.Name())}
}

// failed returns a value carrying err on the tape of v (which may be nil).
func failed(v *Value, err error) *Value {
	if v == nil {
		return &Value{err: err}
	}
	if v.err != nil {
		return v
	}
	return v.tape.fail(err)
}

// Apply runs op on the inputs and records it for Backward. This is how
// every graph function is built; call it directly for an op that has no
// graph function of its own.
func (t *Tape) Apply(op ops.Op, in ...*Value) *Value {
	ts := make([]*tensor.Tensor, len(in))
	requires := false
	for i, v := range in {
		if v == nil {
			return t.fail(fmt.Errorf("%s: input %d is a nil value", op.Name(), i))
		}
		if v.err != nil {
			return &Value{tape: t, err: v.err}
		}
		if v.tape != t {
			return t.fail(fmt.Errorf("%s: input %d belongs to another tape", op.Name(), i))
		}
		ts[i] = v.t
		requires = requires || v.requiresGrad
	}
	out, err := op.Forward(ts)
	if err != nil {
		return t.fail(err)
	}
	v := &Value{tape: t, t: out}
	if requires && t.grad {
		v.requiresGrad = true
		t.vars = append(t.vars, v)
		t.nodes = append(t.nodes, &node{op: op, in: in, out: v})
	}
	return v
}

// Backward computes the gradient of the scalar loss with respect to every
// value it depends on, and adds each parameter's gradient into its Param.
func (t *Tape) Backward(loss *Value) error {
	if loss == nil {
		return errors.New("graph: Backward of a nil value")
	}
	if loss.err != nil {
		return loss.err
	}
	if loss.t.Size() != 1 {
		return fmt.Errorf("graph: Backward of a non-scalar of shape %v; use BackwardWith", loss.t.Shape())
	}
	one, err := tensor.Full(loss.t.DType(), 1, loss.t.Shape()...)
	if err != nil {
		return err
	}
	return t.BackwardWith(loss, one)
}

// BackwardWith back-propagates a given upstream gradient g of v's shape.
// Calling it again (on this or another output) recomputes every gradient on
// the tape from scratch and adds again into the parameters' gradients.
//
// A trainable parameter's leaf that an op reads as an ops.SparseGrader
// input gets that op's gradient as rows (SparseRows), never as a dense
// tensor; if every use of the parameter on the tape is such, it gets a
// sparse gradient (Param.SparseGrad), else the rows are added into its
// dense one. The leaf's Value.Grad holds only the dense part: read a
// parameter's gradient from the Param.
func (t *Tape) BackwardWith(v *Value, g *tensor.Tensor) error {
	if v == nil || g == nil {
		return errors.New("graph: BackwardWith of a nil value or gradient")
	}
	if v.err != nil {
		return v.err
	}
	if v.tape != t {
		return errors.New("graph: BackwardWith of a value from another tape")
	}
	if !g.Shape().Equal(v.t.Shape()) || g.DType() != v.t.DType() {
		return fmt.Errorf("graph: upstream gradient %v%v for a value %v%v", g.DType(), g.Shape(), v.t.DType(), v.t.Shape())
	}
	if !v.requiresGrad {
		return errors.New("graph: Backward of a value that depends on no parameter or Var")
	}
	for _, x := range t.vars {
		x.grad = nil
	}
	v.grad = g
	sparse := map[*Value]*SparseRows{} // parameter leaves' sparse gradients
	for i := len(t.nodes) - 1; i >= 0; i-- {
		n := t.nodes[i]
		if n.out.grad == nil {
			continue
		}
		in := make([]*tensor.Tensor, len(n.in))
		need := make([]bool, len(n.in))
		for j, x := range n.in {
			in[j], need[j] = x.t, x.requiresGrad
		}
		if err := sparseGrads(n, in, need, sparse); err != nil {
			return err
		}
		if !slices.Contains(need, true) {
			continue
		}
		grads, err := n.op.Backward(in, n.out.t, n.out.grad, need)
		if err != nil {
			return fmt.Errorf("%s backward: %w", n.op.Name(), err)
		}
		for j, x := range n.in {
			if need[j] && grads[j] != nil {
				x.grad = accumulate(x.grad, grads[j])
			}
		}
	}
	for p, x := range t.params {
		if !p.Trainable {
			continue
		}
		if x.grad != nil {
			p.addGrad(x.grad)
		}
		if s := sparse[x]; s != nil {
			p.addSparse(s)
		}
	}
	return nil
}

// sparseGrads takes from n's op, if it is an ops.SparseGrader, the sparse
// gradients of the inputs that are parameter leaves, merges each into
// acc[leaf] and clears its need, so Backward does not build it densely.
func sparseGrads(n *node, in []*tensor.Tensor, need []bool, acc map[*Value]*SparseRows) error {
	sg, ok := n.op.(ops.SparseGrader)
	if !ok {
		return nil
	}
	for j, x := range n.in {
		if !need[j] || x.param == nil {
			continue
		}
		rows, vals, ok := sg.SparseGrad(in, n.out.grad, j)
		if !ok {
			continue
		}
		s := &SparseRows{Rows: rows, Values: vals}
		if err := s.Validate(x.t); err != nil {
			return fmt.Errorf("%s sparse backward: %w", n.op.Name(), err)
		}
		if prev := acc[x]; prev != nil {
			s = mergeRows(prev, s)
		}
		acc[x], need[j] = s, false
	}
	return nil
}

// accumulate returns acc + g without writing into either: a gradient tensor
// may be shared by several values, so none is ever updated in place.
func accumulate(acc, g *tensor.Tensor) *tensor.Tensor {
	if acc == nil {
		return g
	}
	sum, err := ops.Add(acc, g)
	if err != nil { // both are gradients of one value: same shape and dtype
		panic("graph: gradient accumulation: " + err.Error())
	}
	return sum
}
