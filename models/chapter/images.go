package chapter

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // image.Decode reads JPEG
	_ "image/png"  // and PNG
	"io"
	"os"

	"github.com/plumbml/plumb/data/mnist"
	"github.com/plumbml/plumb/tensor"
)

// maxImageFile bounds one input file of ReadImages: 64 MiB, far above a
// side×side image in any of its formats yet small enough to read whole.
const maxImageFile = 64 << 20

// ReadImages reads the images of in (each file, else stdin as one file):
// PNG or JPEG files of one side×side image, or IDX files of unsigned
// bytes holding [H, W], [N, H, W] (gray) or [N, H, W, C] images, as the
// MNIST files do. It returns them as float32 [N, channels, side, side]
// scaled to [0, 1] by p/255, as the datasets' readers scale pixels
// (gray for channels 1, RGB for 3), and a name for each: the file, with
// "#i" for the i-th image of an IDX file. An image of another size is an
// error naming it; sizes are read from the header before any pixel.
func ReadImages(in Input, channels, side int) ([]string, *tensor.Tensor, error) {
	if channels != 1 && channels != 3 {
		return nil, nil, fmt.Errorf("chapter: ReadImages: %d channels, want 1 or 3", channels)
	}
	var names []string
	var pix []float32
	add := func(name string, b []byte) error {
		if len(b) >= 4 && b[0] == 0 && b[1] == 0 && b[2] == 8 {
			return addIDX(name, b, channels, side, &names, &pix)
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s: not a PNG, JPEG or IDX image: %w", name, err)
		}
		if cfg.Width != side || cfg.Height != side {
			return fmt.Errorf("%s: a %d×%d %s image, want %d×%d", name, cfg.Width, cfg.Height, format, side, side)
		}
		img, _, err := image.Decode(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		names = append(names, name)
		pix = appendPixels(pix, img, channels)
		return nil
	}
	read := func(r io.Reader, name string) error {
		b, err := io.ReadAll(io.LimitReader(r, maxImageFile+1))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(b) > maxImageFile {
			return fmt.Errorf("%s: more than %d bytes, too large for an image input", name, maxImageFile)
		}
		return add(name, b)
	}
	if len(in.Files) == 0 {
		if in.Stdin == nil {
			return nil, nil, fmt.Errorf("no input: name image files or give one on stdin")
		}
		if err := read(in.Stdin, "stdin"); err != nil {
			return nil, nil, err
		}
	}
	for _, name := range in.Files {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, err
		}
		err = read(f, name)
		f.Close()
		if err != nil {
			return nil, nil, err
		}
	}
	t, err := tensor.FromSlice(pix, len(names), channels, side, side)
	return names, t, err
}

// appendPixels appends img's pixels channel by channel (channels first),
// each scaled to [0, 1].
func appendPixels(pix []float32, img image.Image, channels int) []float32 {
	r := img.Bounds()
	if channels == 1 {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				pix = append(pix, float32(color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y)/255)
			}
		}
		return pix
	}
	for c := range 3 {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				rgba := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
				pix = append(pix, float32([3]uint8{rgba.R, rgba.G, rgba.B}[c])/255)
			}
		}
	}
	return pix
}

// addIDX appends the images of an IDX file (see ReadImages).
func addIDX(name string, b []byte, channels, side int, names *[]string, pix *[]float32) error {
	idx, err := mnist.ReadIDX(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	dims := idx.Dims
	n, c := 1, 1
	switch len(dims) {
	case 2:
		dims = []int{1, dims[0], dims[1], 1}
	case 3:
		n, dims = dims[0], []int{dims[0], dims[1], dims[2], 1}
	case 4:
		n, c = dims[0], dims[3]
	default:
		return fmt.Errorf("%s: IDX dims %v, want [H W], [N H W] or [N H W C]", name, idx.Dims)
	}
	if dims[1] != side || dims[2] != side || c != channels {
		return fmt.Errorf("%s: IDX images of %d×%d×%d, want %d×%d×%d", name, dims[1], dims[2], c, side, side, channels)
	}
	per := side * side * c
	for i := range n {
		img := idx.Data[i*per : (i+1)*per]
		for ch := range c { // the file is channels last
			for p := range side * side {
				*pix = append(*pix, float32(img[p*c+ch])/255)
			}
		}
		if n == 1 && len(idx.Dims) == 2 {
			*names = append(*names, name)
		} else {
			*names = append(*names, fmt.Sprintf("%s#%d", name, i))
		}
	}
	return nil
}
