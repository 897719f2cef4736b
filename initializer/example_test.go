package initializer_test

import (
	"fmt"

	"github.com/plumbml/plumb/initializer"
	"github.com/plumbml/plumb/tensor"
)

// A Linear kernel [in, out] drawn as Keras draws it: Glorot-uniform within
// ±sqrt(6/(in+out)). The same seed gives the same weights.
func Example() {
	w, err := initializer.GlorotUniform(tensor.NewRNG(1), tensor.Float32, 784, 128)
	if err != nil {
		fmt.Println(err)
		return
	}
	again, _ := initializer.GlorotUniform(tensor.NewRNG(1), tensor.Float32, 784, 128)
	in, out := initializer.Fans(w.Shape())
	fmt.Println(w.Shape(), in, out, w.At(0) == again.At(0))
	// Output: [784 128] 784 128 true
}
