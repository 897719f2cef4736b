// Package ops holds every Plumb operation: its attributes and shape rules,
// its forward and backward passes, and its CPU reference kernels in float32
// and float64.
//
// Each op is an Op value built by a constructor (ops.MatMulOp, ops.Conv2DOp,
// ...) that carries its attributes and whatever the forward pass saves for the
// backward pass. The graph package records Ops on a tape; the plain functions
// here (ops.MatMul, ops.Conv2D, ...) run one forward pass on tensors for users
// who need no gradients. ops knows nothing of graph.
//
// The contract (see ARCHITECTURE.md, "The life of one op"): the exported entry points validate dtypes,
// ranks, shapes and attributes and return an *Error naming the op and the
// input shapes; inner kernels work on validated slices and cannot fail.
//
// Concurrency: the plain functions (ops.MatMul, ops.Attention, ...) make
// a new Op per call and only read their inputs, so they may run on many
// goroutines at once, sharing inputs; the kernels that split work over
// the cores (internal/par) are safe for that. An Op value is not safe for
// concurrent use: its Forward saves state for its Backward (graph's tape
// makes one per recorded op). Register and the other registries are for
// package initialisation, not for use while ops run.
package ops

import (
	"fmt"
	"strings"

	"github.com/plumbml/plumb/tensor"
)

// Op is one application of an operation.
type Op interface {
	// Name is the op's registry name, such as "conv2d".
	Name() string
	// Forward validates the inputs and computes the output. An Op value is
	// used for at most one Forward, whose saved state its Backward may read.
	Forward(in []*tensor.Tensor) (*tensor.Tensor, error)
	// Backward returns, for each input, the gradient of the loss given gout,
	// the gradient with respect to the output out. need[i] says whether input
	// i's gradient is wanted; an unwanted or non-differentiable input's entry
	// may be nil. Shapes were validated by Forward.
	Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error)
}

// Error is a user's mistake caught by an op: it names the op, the shapes of
// the inputs it was given and what it expected.
type Error struct {
	Op     string
	Shapes []string // "float32[2 3]" per input
	Msg    string
}

func (e *Error) Error() string {
	if len(e.Shapes) == 0 {
		return fmt.Sprintf("%s: %s", e.Op, e.Msg)
	}
	return fmt.Sprintf("%s: inputs %s: %s", e.Op, strings.Join(e.Shapes, ", "), e.Msg)
}

// Errorf builds an *Error for op with the given inputs.
func Errorf(op string, in []*tensor.Tensor, format string, args ...any) error {
	e := &Error{Op: op, Msg: fmt.Sprintf(format, args...)}
	for _, t := range in {
		if t == nil {
			e.Shapes = append(e.Shapes, "nil")
			continue
		}
		e.Shapes = append(e.Shapes, fmt.Sprintf("%v%v", t.DType(), t.Shape()))
	}
	return e
}

// checkFloat checks the input count and that every input is non-nil and of
// one float dtype, which it returns.
func checkFloat(op string, in []*tensor.Tensor, n int) (tensor.DType, error) {
	if err := checkArity(op, in, n); err != nil {
		return 0, err
	}
	dt := in[0].DType()
	for _, t := range in {
		if t.DType() != dt || !dt.IsFloat() {
			return 0, Errorf(op, in, "want float32 or float64 inputs of one dtype")
		}
	}
	return dt, nil
}

// checkShapes is checkFloat for a device-free check (Checker): it reads
// the inputs' count, nils and dtypes, wherever their data is.
func checkShapes(op string, in []*tensor.Tensor, n int) (tensor.DType, error) {
	if err := checkCount(op, in, n); err != nil {
		return 0, err
	}
	dt := in[0].DType()
	for _, t := range in {
		if t.DType() != dt || !dt.IsFloat() {
			return 0, Errorf(op, in, "want float32 or float64 inputs of one dtype")
		}
	}
	return dt, nil
}

// checkCount checks the input count and that no input is nil.
func checkCount(op string, in []*tensor.Tensor, n int) error {
	if len(in) != n {
		return Errorf(op, in, "want %d inputs, got %d", n, len(in))
	}
	for _, t := range in {
		if t == nil {
			return Errorf(op, in, "nil input")
		}
	}
	return nil
}

func checkArity(op string, in []*tensor.Tensor, n int) error {
	if err := checkCount(op, in, n); err != nil {
		return err
	}
	for _, t := range in {
		if t.Storage() != nil { // the CPU kernels read host memory; Dispatch picks a device's kernel
			return Errorf(op, in, "input on %v: the CPU kernel reads host memory; move it with To(nil), or run the op through ops.Run or a tape", t.Device())
		}
	}
	return nil
}

// wantedGrads returns zeroed gradients for the inputs whose need is set
// and nil for the others.
func wantedGrads(in []*tensor.Tensor, need []bool) []*tensor.Tensor {
	grads := make([]*tensor.Tensor, len(in))
	for i, t := range in {
		if need[i] {
			grads[i] = tensor.ZerosLike(t)
		}
	}
	return grads
}

// run is the body of every plain function: one Forward of a fresh op.
func run(op Op, in ...*tensor.Tensor) (*tensor.Tensor, error) { return Run(op, in...) }

// unknownOp is what a constructor that picks an op by name (BinaryOp,
// UnaryOp, ReduceOp) returns for a name it does not know: its Forward
// returns the error, so a typo fails like any other mistake instead of
// panicking.
type unknownOp struct {
	name string
	err  error
}

func (o unknownOp) Name() string { return o.name }

func (o unknownOp) Forward([]*tensor.Tensor) (*tensor.Tensor, error) { return nil, o.err }

func (o unknownOp) Backward([]*tensor.Tensor, *tensor.Tensor, *tensor.Tensor, []bool) ([]*tensor.Tensor, error) {
	return nil, o.err
}
