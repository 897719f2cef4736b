package cifar

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/plumbml/plumb/tensor"
)

// Norm is a per-channel normalisation, x' = (x - Mean[c]) / Std[c].
type Norm struct {
	Mean, Std []float64
}

// checkImages returns the sizes of images, which must be float32 [N, C, H, W]
// with N >= 1; fn names the caller in the error.
func checkImages(fn string, images *tensor.Tensor) (n, c, hw int, err error) {
	if images == nil || images.DType() != tensor.Float32 || images.Rank() != 4 || images.Dim(0) < 1 {
		return 0, 0, 0, fmt.Errorf("cifar: %s: images %v: want float32 [N, C, H, W] with N >= 1", fn, describe(images))
	}
	return images.Dim(0), images.Dim(1), images.Dim(2) * images.Dim(3), nil
}

func describe(t *tensor.Tensor) string {
	if t == nil {
		return "nil"
	}
	return fmt.Sprintf("%v %v", t.DType(), t.Shape())
}

// ChannelNorm measures the mean and the (population) standard deviation of
// each channel of images [N, C, H, W] over all images and pixels, in
// float64: what Net.SetNorm takes. Normalise the test images with the
// training images' figures.
func ChannelNorm(images *tensor.Tensor) (Norm, error) {
	n, c, hw, err := checkImages("ChannelNorm", images)
	if err != nil {
		return Norm{}, err
	}
	px := images.Float32s()
	nm := Norm{Mean: make([]float64, c), Std: make([]float64, c)}
	count := float64(n * hw)
	for ch := range c {
		var sum, sq float64
		for i := range n {
			for _, v := range px[(i*c+ch)*hw : (i*c+ch+1)*hw] {
				sum += float64(v)
				sq += float64(v) * float64(v)
			}
		}
		mean := sum / count
		nm.Mean[ch] = mean
		nm.Std[ch] = math.Sqrt(max(sq/count-mean*mean, 0))
	}
	return nm, nil
}

// Augment returns a randomly shifted and mirrored copy of images
// [N, C, H, W], the standard CIFAR augmentation (He et al. 2016, section
// 4.2): each image is padded with pad zeros on every side, a window of the
// original size is cut at a uniformly drawn offset, and the result is
// flipped left to right with probability 1/2. images is left as it is.
func Augment(images *tensor.Tensor, pad int, rng *rand.Rand) (*tensor.Tensor, error) {
	n, c, _, err := checkImages("Augment", images)
	if err != nil {
		return nil, err
	}
	if pad < 0 || rng == nil {
		return nil, fmt.Errorf("cifar: Augment: padding %d and a nil random source (%v): want padding >= 0 and a source", pad, rng == nil)
	}
	h, w := images.Dim(2), images.Dim(3)
	out := tensor.Zeros(tensor.Float32, n, c, h, w)
	src, dst := images.Float32s(), out.Float32s()
	for i := range n {
		dy, dx := rng.IntN(2*pad+1)-pad, rng.IntN(2*pad+1)-pad // the window's offset from the centre
		flip := rng.IntN(2) == 1
		for ch := range c {
			in := src[(i*c+ch)*h*w : (i*c+ch+1)*h*w]
			o := dst[(i*c+ch)*h*w : (i*c+ch+1)*h*w]
			for y := range h {
				sy := y + dy
				if sy < 0 || sy >= h {
					continue // a padding row: zeros
				}
				for x := range w {
					sx := x + dx
					if flip {
						sx = w - 1 - x + dx
					}
					if sx >= 0 && sx < w {
						o[y*w+x] = in[sy*w+sx]
					}
				}
			}
		}
	}
	return out, nil
}
