package data_test

import (
	"fmt"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/tensor"
)

// A shuffled Loader gives each epoch its own order, the same on every run
// for a seed; Shard deals the batches of that order to the ranks of a
// data-parallel run, so no row is seen twice.
func ExampleLoader_Shard() {
	ids := tensor.MustFromSlice([]int64{0, 1, 2, 3, 4, 5, 6, 7}, 8)
	ds, _ := data.NewDataset(data.DenseField("id", ids))
	loader, err := data.NewLoader(ds, 2, data.Shuffle(7))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("epoch 0:", loader.Order(0))
	for rank := range 2 {
		shard, err := loader.Shard(rank, 2)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("rank %d:", rank)
		for b, err := range shard.Batches(0) {
			if err != nil {
				fmt.Println(err)
				return
			}
			fmt.Print(" ", b.Tensor("id").Int64s())
		}
		fmt.Println()
	}
	// Output:
	// epoch 0: [[4 7] [5 2] [1 3] [0 6]]
	// rank 0: [4 7] [1 3]
	// rank 1: [5 2] [0 6]
}
