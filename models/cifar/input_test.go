package cifar

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/tensor"
)

func TestChannelNormCentresAndScales(t *testing.T) {
	// two images, two channels of 2 pixels: channel 0 holds 1, 2, 3, 4 and
	// channel 1 holds 5 everywhere.
	x := tensor.MustFromSlice([]float32{1, 2, 5, 5, 3, 4, 5, 5}, 2, 2, 1, 2)
	nm, err := ChannelNorm(x)
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float64{2.5, 5}, nm.Mean, 1e-12)
	assert.InDeltaSlice(t, []float64{math.Sqrt(1.25), 0}, nm.Std, 1e-12)

	// a Net with an empty body returns its normalised input
	net, err := newNet(layers.Sequential{}, 2)
	require.NoError(t, err)
	require.NoError(t, net.SetNorm(nm))
	for _, tape := range []*graph.Tape{graph.NewTape(), graph.NewEvalTape()} {
		out, err := net.Forward(tape.Const(x)).Tensor()
		require.NoError(t, err)
		s := float32(1 / math.Sqrt(1.25))
		assert.InDeltaSlice(t, []float32{-1.5 * s, -0.5 * s, 0, 0, 0.5 * s, 1.5 * s, 0, 0}, out.Float32s(), 1e-6)
	}
	assert.ElementsMatch(t, []*graph.Param{net.Mean, net.Std}, net.Params())
	assert.Empty(t, layers.Trainable(net.Params()), "the normalisation is not trained")
}

func TestInputErrors(t *testing.T) {
	rng := tensor.NewRNG(1)
	flat := tensor.Zeros(tensor.Float32, 4, 3)
	ints := tensor.Zeros(tensor.Int64, 1, 3, 2, 2)
	img := tensor.Zeros(tensor.Float32, 1, 3, 2, 2)
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"norm of a matrix", func() error { _, err := ChannelNorm(flat); return err }, "ChannelNorm: images float32 [4 3]"},
		{"norm of ints", func() error { _, err := ChannelNorm(ints); return err }, "want float32 [N, C, H, W]"},
		{"norm of nil", func() error { _, err := ChannelNorm(nil); return err }, "images nil"},
		{"norm with wrong channels", func() error {
			net, err := NewResNet(Sizes{Depth: 8, Width: 1, Classes: 2}, rng)
			require.NoError(t, err)
			return net.SetNorm(Norm{Mean: []float64{0}, Std: []float64{1}})
		}, "1 means and 1 deviations for a net with 3 input channels"},
		{"augment negative pad", func() error { _, err := Augment(img, -1, rng); return err }, "padding -1"},
		{"augment nil rng", func() error { _, err := Augment(img, 4, nil); return err }, "nil random source"},
		{"augment a matrix", func() error { _, err := Augment(flat, 4, rng); return err }, "Augment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorContains(t, tc.run(), tc.want)
		})
	}
}

// Every augmented image is its source shifted by at most pad pixels (zeros
// where the shift brings in padding), mirrored or not; over many images
// each offset and both mirrorings occur, and with pad 0 an image is only mirrored or not.
func TestAugmentShiftsAndMirrors(t *testing.T) {
	const n, h, w, pad = 400, 5, 6, 2
	src := tensor.Zeros(tensor.Float32, n, 2, h, w)
	px := src.Float32s()
	for i := range px {
		px[i] = float32(i%(2*h*w) + 1) // nonzero, distinct within an image
	}
	out, err := Augment(src, pad, tensor.NewRNG(3))
	require.NoError(t, err)
	assert.Equal(t, []float32(px[:2*h*w]), src.Float32s()[:2*h*w], "the input is unchanged")
	seen := map[[3]int]int{}
	for i := range n {
		img := out.Float32s()[i*2*h*w : (i+1)*2*h*w]
		found := false
		for dy := -pad; dy <= pad && !found; dy++ {
			for dx := -pad; dx <= pad && !found; dx++ {
				for flip := range 2 {
					if matchesShift(px[i*2*h*w:(i+1)*2*h*w], img, h, w, dy, dx, flip == 1) {
						seen[[3]int{dy, dx, flip}]++
						found = true
						break
					}
				}
			}
		}
		require.True(t, found, "image %d is no shift or mirror of its source", i)
	}
	assert.Len(t, seen, (2*pad+1)*(2*pad+1)*2, "every offset and mirroring occurs")

	same, err := Augment(src, 0, tensor.NewRNG(3))
	require.NoError(t, err)
	for i := range n {
		img := same.Float32s()[i*2*h*w : (i+1)*2*h*w]
		in := px[i*2*h*w : (i+1)*2*h*w]
		require.True(t, matchesShift(in, img, h, w, 0, 0, false) || matchesShift(in, img, h, w, 0, 0, true))
	}
}

// matchesShift says whether out[c, y, x] = in[c, y+dy, x'+dx] with x' = x
// or w-1-x (mirrored), and 0 outside the image.
func matchesShift(in, out []float32, h, w, dy, dx int, mirror bool) bool {
	for c := range len(in) / (h * w) {
		for y := range h {
			for x := range w {
				sx := x
				if mirror {
					sx = w - 1 - x
				}
				sy, sx := y+dy, sx+dx
				want := float32(0)
				if sy >= 0 && sy < h && sx >= 0 && sx < w {
					want = in[c*h*w+sy*w+sx]
				}
				if out[c*h*w+y*w+x] != want {
					return false
				}
			}
		}
	}
	return true
}
