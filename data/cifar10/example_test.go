package cifar10_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/plumbml/plumb/data/cifar10"
)

// One CIFAR-10 record, a label byte and 3×32×32 pixel bytes, written as a
// batch file and read back.
func ExampleRead() {
	dir, err := os.MkdirTemp("", "cifar10")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	record := make([]byte, 1+3*32*32)
	record[0] = 8 // ship
	record[1] = 255
	path := filepath.Join(dir, "test_batch.bin")
	if err := os.WriteFile(path, record, 0o644); err != nil {
		panic(err)
	}
	f, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	ds, err := cifar10.Read(f, path)
	if err != nil {
		panic(err)
	}
	label := ds.Tensor("label").Int64s()[0]
	fmt.Println(ds.Tensor("image").Shape(), ds.Tensor("image").Float32s()[:2], label, cifar10.Classes[label])
	// Output: [1 3 32 32] [1 0] 8 ship
}
