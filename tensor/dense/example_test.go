package dense_test

import (
	"fmt"

	gt "gorgonia.org/tensor"

	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/tensor/dense"
)

// Hand a Plumb tensor to code that takes Gorgonia's *Dense, and back,
// without copying: both sides see the same storage.
func ExampleFromTensor() {
	t := tensor.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	d, err := dense.FromTensor(t)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Shape(), d.Dtype())

	t.SetAt(0, 10) // a write on the Plumb side shows in the Dense
	v, _ := d.At(0, 0)
	fmt.Println(v)

	g := gt.New(gt.WithShape(2), gt.WithBacking([]float64{0.5, 1.5}))
	back, err := dense.ToTensor(g)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(back.DType(), back.Shape(), back.Float64s())
	// Output:
	// (2, 3) float32
	// 10
	// float64 [2] [0.5 1.5]
}
