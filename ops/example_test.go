package ops_test

import (
	"errors"
	"fmt"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The plain functions of ops compute one op on tensors, without a tape:
// here a two-class linear classifier's scores for two inputs.
func ExampleLinear() {
	x := tensor.MustFromSlice([]float32{1, 2, 0, -1}, 2, 2)     // [batch, in]
	w := tensor.MustFromSlice([]float32{1, -1, 0.5, 0.5}, 2, 2) // [in, out]
	b := tensor.MustFromSlice([]float32{0, 0.1}, 2)             // [out]
	z, err := ops.Linear(x, w, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := ops.Softmax(z, 1)
	class, _ := ops.ArgMax(p, 1)
	fmt.Printf("logits %.3f\n", z.Float32s())
	fmt.Printf("probs  %.3f\n", p.Float32s())
	fmt.Println("class ", class.Int64s())
	// Output:
	// logits [2.000 0.100 -0.500 -0.400]
	// probs  [0.870 0.130 0.475 0.525]
	// class  [0 1]
}

// Bad input is an error, never a panic: an *ops.Error names the op, the
// shapes it was given and what it expected.
func ExampleError() {
	a := tensor.Zeros(tensor.Float32, 2, 3)
	b := tensor.Zeros(tensor.Float32, 4, 5)
	_, err := ops.MatMul(a, b, false, false)
	// err reads "matmul: inputs float32[2 3], float32[4 5]: inner dims differ: ...".
	var opErr *ops.Error
	if errors.As(err, &opErr) {
		fmt.Println("op:", opErr.Op, "inputs:", opErr.Shapes)
	}
	// Output: op: matmul inputs: [float32[2 3] float32[4 5]]
}
