package embedded_test

import (
	"fmt"

	"github.com/plumbml/plumb/data/mnist/embedded"
)

// The digits come with the binary: no download, no data directory.
func ExampleLoad() {
	train, test, err := embedded.Load()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("train", train.Len(), "test", test.Len(), "fields", train.Names())
	first := test.Take(1)
	fmt.Println("image", first.Tensor("image").Shape(), first.Tensor("image").DType(), "label", first.Tensor("label").Int64s())
	// Output:
	// train 60000 test 10000 fields [image label]
	// image [1 1 28 28] float32 label [7]
}
