package imagefolder_test

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"

	"github.com/plumbml/plumb/data/imagefolder"
)

// A folder of two classes, one 2×1 PNG each, read as a dataset.
func Example() {
	dir, err := os.MkdirTemp("", "imagefolder")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	for _, class := range []string{"dog", "cat"} {
		img := image.NewRGBA(image.Rect(0, 0, 2, 1))
		img.Set(0, 0, color.RGBA{R: 255, A: 255})
		if err := os.MkdirAll(filepath.Join(dir, "train", class), 0o755); err != nil {
			panic(err)
		}
		f, err := os.Create(filepath.Join(dir, "train", class, "0001.png"))
		if err != nil {
			panic(err)
		}
		if err := png.Encode(f, img); err != nil {
			panic(err)
		}
		f.Close()
	}
	ds, classes, err := imagefolder.Load(dir, "train")
	if err != nil {
		panic(err)
	}
	fmt.Println(classes, ds.Tensor("image").Shape(), ds.Tensor("label").Int64s())
	fmt.Println(ds.Tensor("image").Float32s()[:6])
	// Output:
	// [cat dog] [2 3 1 2] [0 1]
	// [1 0 0 0 0 0]
}
