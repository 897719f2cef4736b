package mnist_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/plumbml/plumb/data/mnist"
)

// writeIDX writes an IDX file of unsigned bytes: magic 00 00 08 <rank>,
// the dims as big-endian uint32, then the bytes.
func writeIDX(path string, dims []uint32, b []byte) error {
	head := []byte{0, 0, 0x08, byte(len(dims))}
	for _, d := range dims {
		head = binary.BigEndian.AppendUint32(head, d)
	}
	return os.WriteFile(path, append(head, b...), 0o644)
}

// Two 2×2 training images and one test image, written as the four MNIST
// files and read back.
func Example() {
	dir, err := os.MkdirTemp("", "mnist")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	files := []struct {
		name string
		dims []uint32
		b    []byte
	}{
		{"train-images-idx3-ubyte", []uint32{2, 2, 2}, []byte{0, 255, 255, 0, 51, 102, 153, 204}},
		{"train-labels-idx1-ubyte", []uint32{2}, []byte{7, 3}},
		{"t10k-images-idx3-ubyte", []uint32{1, 2, 2}, []byte{0, 0, 0, 255}},
		{"t10k-labels-idx1-ubyte", []uint32{1}, []byte{1}},
	}
	for _, f := range files {
		if err := writeIDX(filepath.Join(dir, f.name), f.dims, f.b); err != nil {
			panic(err)
		}
	}
	train, test, err := mnist.Load(dir)
	if err != nil {
		panic(err)
	}
	fmt.Println(train.Tensor("image").Shape(), train.Tensor("image").Float32s()[4:], train.Tensor("label").Int64s())
	fmt.Println(test.Len(), test.Tensor("label").Int64s())
	// Output:
	// [2 1 2 2] [0.2 0.4 0.6 0.8] [7 3]
	// 1 [1]
}
