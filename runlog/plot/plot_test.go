package plot

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/runlog"
)

// fakeRun is a run log whose loss decays at rate and whose accuracy rises.
func fakeRun(framework string, rate float64) *runlog.Run {
	r := &runlog.Run{Meta: runlog.Record{Kind: runlog.KindRun, Framework: framework, Model: "mnist-cnn"}}
	for s := 1; s <= 40; s++ {
		r.Steps = append(r.Steps, runlog.Record{Kind: runlog.KindStep, Step: int64(s), Examples: int64(64 * s),
			Loss: 2.3 * math.Exp(-rate*float64(s)), RSS: int64(100+s) << 20, Wall: float64(s) / 10})
	}
	for e := 1; e <= 3; e++ {
		r.Epochs = append(r.Epochs, runlog.Record{Kind: runlog.KindEpoch, Epoch: e,
			Metrics: map[string]float64{"accuracy": 1 - 0.1/float64(e)*rate*10}})
	}
	return r
}

func TestRunsDrawsAPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.png")
	require.NoError(t, Runs([]*runlog.Run{fakeRun("plumb", 0.1), fakeRun("pytorch", 0.05)}, path))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	// 3 panels (loss, accuracy, RSS) two to a row: 12 × 8 inches at 96
	// dpi, and the legend's strip above them.
	legend := int(math.Round(legendHeight(2).Dots(96)))
	assert.Equal(t, 12*96, img.Bounds().Dx())
	assert.InDelta(t, 8*96+legend, img.Bounds().Dy(), 1)
	coloured := func(y0, y1 int) int {
		n := 0
		for y := y0; y < y1; y++ {
			for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				if r != g || g != b {
					n++
				}
			}
		}
		return n
	}
	assert.Positive(t, coloured(0, legend), "the runs' legend is drawn in the strip above the panels, outside the data")
	colours := map[[3]uint32]int{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 2 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			if r != g || g != b { // a coloured (curve) pixel, not black, grey or white
				colours[[3]uint32{r >> 8, g >> 8, b >> 8}]++
			}
		}
	}
	assert.Greater(t, len(colours), 2, "the curves of two runs should draw in their colours")

	assert.ErrorContains(t, Runs(nil, path), "no runs")
	assert.Error(t, Runs([]*runlog.Run{fakeRun("plumb", 0.1)}, filepath.Join(t.TempDir(), "no", "x.png")))
}

// The panels use the console's units: accuracy in % (logged as a
// fraction), BLEU in points as logged, and the loss against the runs'
// own unit.
func TestPanelsInConsoleUnits(t *testing.T) {
	r := fakeRun("plumb", 0.1)
	r.Meta.Unit = "target words"
	for i := range r.Epochs {
		r.Epochs[i].Metrics["bleu"] = 30.5
	}
	ps, omitted := panels([]*runlog.Run{r}, 16)
	require.Empty(t, omitted)
	require.Len(t, ps, 4)
	assert.Equal(t, "thousand target words seen", ps[0].x)
	assert.Equal(t, "accuracy (%)", ps[1].y)
	assert.InDelta(t, 100*r.Epochs[0].Metrics["accuracy"], ps[1].curve(r)[0].Y, 1e-9)
	assert.Equal(t, "bleu (points)", ps[2].y)
	assert.Equal(t, 30.5, ps[2].curve(r)[0].Y)

	other := fakeRun("pytorch", 0.1)
	other.Meta.Unit = "images"
	ps, _ = panels([]*runlog.Run{r, other}, 16)
	assert.Equal(t, "thousand examples seen", ps[0].x, "runs of different units")
}
