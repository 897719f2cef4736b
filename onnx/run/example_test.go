package run_test

import (
	"fmt"

	"github.com/plumbml/plumb/onnx/run"
	"github.com/plumbml/plumb/tensor"
)

// Load compiles a model file once; Run then takes inputs by name, here a
// batch of 2 for the MLP's symbolic batch dimension.
func Example() {
	m, err := run.Load("testdata/mlp.onnx")
	if err != nil {
		panic(err)
	}
	x := tensor.Zeros(tensor.Float32, 2, 12)
	out, err := m.Run(map[string]*tensor.Tensor{"x": x})
	if err != nil {
		panic(err)
	}
	y := out["y"]
	fmt.Println(y.Shape(), m.InputNames(), m.OutputNames())
	// Output: [2 5] [x] [y]
}
