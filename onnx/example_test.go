package onnx_test

import (
	"fmt"

	"github.com/plumbml/plumb/onnx"
)

// Load a model and print what `plumb onnx inspect` will show.
func ExampleInspect() {
	m, err := onnx.Load("testdata/symbolic.onnx")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(onnx.Inspect(m))
	fmt.Println(m.Graph.Initializer("b2").Shape())
	// Output:
	// opset: 21
	// input x: FLOAT [batch, 4]
	// output y: FLOAT [batch, 3]
	// op Gemm: 2
	// op Relu: 1
	// unsupported: Gemm, Relu
	// [3]
}
