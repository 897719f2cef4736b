package graph_test

import (
	"fmt"
	"math"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// scaledSoftplus is a custom op, y = scale·log(1 + eˣ), written outside
// package ops: any value with Name, Forward and Backward is an ops.Op.
type scaledSoftplus struct{ scale float64 }

func (scaledSoftplus) Name() string { return "scaled_softplus" }

// Forward validates its input, then computes; bad input is an error naming
// the op and the shapes, never a panic.
func (s scaledSoftplus) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if len(in) != 1 || in[0].DType() != tensor.Float64 {
		return nil, ops.Errorf(s.Name(), in, "want one float64 input")
	}
	x := in[0].Float64s()
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = s.scale * math.Log1p(math.Exp(v))
	}
	return tensor.FromSlice(y, in[0].Shape()...)
}

// Backward returns dL/dx = gout · scale · sigmoid(x).
func (s scaledSoftplus) Backward(in []*tensor.Tensor, _, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	if !need[0] {
		return []*tensor.Tensor{nil}, nil
	}
	x, g := in[0].Float64s(), gout.Float64s()
	dx := make([]float64, len(x))
	for i, v := range x {
		dx[i] = g[i] * s.scale / (1 + math.Exp(-v))
	}
	t, err := tensor.FromSlice(dx, in[0].Shape()...)
	return []*tensor.Tensor{t}, err
}

// A custom op on a tape: Apply records it like any built-in op, so
// Backward takes its gradient through it.
func ExampleTape_Apply() {
	tape := graph.NewTape()
	x := tape.Var(tensor.MustFromSlice([]float64{-1, 0, 2}, 3))
	y := tape.Apply(scaledSoftplus{scale: 2}, x)
	if err := tape.Backward(graph.Sum(y)); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := y.Tensor()
	fmt.Printf("y     = %.3f\n", out.Float64s())
	fmt.Printf("dy/dx = %.3f\n", x.Grad().Float64s())

	// A float32 input fails on the tape, and the error says why.
	bad := graph.NewTape()
	_, err := bad.Apply(scaledSoftplus{scale: 2}, bad.Const(tensor.MustFromSlice([]float32{1}, 1))).Tensor()
	fmt.Println(err)
	// Output:
	// y     = [0.627 1.386 4.254]
	// dy/dx = [0.538 1.000 1.762]
	// scaled_softplus: inputs float32[1]: want one float64 input
}
