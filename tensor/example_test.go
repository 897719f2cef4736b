package tensor_test

import (
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// Dense tensors: build from a slice, reshape and take a row (views that
// share storage), and see a bad shape come back as an error.
func ExampleFromSlice() {
	t, err := tensor.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(t.DType(), t.Shape(), t.Size())

	r, _ := t.Reshape(3, 2)
	row, _ := r.Row(1)
	fmt.Println("row 1 of", r.Shape(), "is", row.Float32s())
	row.SetAt(0, 30) // a view: the write shows in t
	fmt.Println(t.Float32s())

	_, err = tensor.FromSlice([]float32{1, 2, 3}, 2, 2)
	fmt.Println(err)
	// Output:
	// float32 [2 3] 6
	// row 1 of [3 2] is [3 4]
	// [1 2 30 4 5 6]
	// tensor: 3 elements do not fill shape [2 2] (4)
}

// A ragged batch holds sequences of different lengths back to back, without
// padding; ToPadded and Mask give the padded view that some code wants.
func ExampleNewRagged() {
	steps := tensor.MustFromSlice([]int64{4, 8, 15, 16, 23, 42}, 6)
	batch, err := tensor.NewRagged(steps, []int{0, 3, 4, 6})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("lengths", batch.Lengths(), "longest", batch.MaxLen())
	second, _ := batch.Seq(1)
	fmt.Println("sequence 1:", second.Int64s())

	padded, lengths, _ := batch.ToPadded(0)
	mask, _ := batch.Mask(tensor.Float32)
	fmt.Println(padded.Shape(), padded.Int64s(), lengths)
	fmt.Println(mask.Float32s())
	// Output:
	// lengths [3 1 2] longest 3
	// sequence 1: [16]
	// [3 3] [4 8 15 16 0 0 23 42 0] [3 1 2]
	// [1 1 1 1 0 0 1 1 0]
}
