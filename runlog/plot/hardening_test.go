package plot

import (
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"gonum.org/v1/plot/plotter"

	"github.com/plumbml/plumb/internal/memlimit"
	"github.com/plumbml/plumb/runlog"
)

// manyMetrics writes a run log whose one epoch record holds n metric
// names (about 20 bytes each) into a new directory, and returns it.
func manyMetrics(n int) (string, error) {
	dir, err := os.MkdirTemp("", "plot")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(`{"kind":"run","framework":"plumb","model":"m"}` + "\n")
	b.WriteString(`{"kind":"step","epoch":1,"step":1,"examples":64,"loss":2.3,"rss_bytes":1000000,"wall_s":1}` + "\n")
	b.WriteString(`{"kind":"epoch","epoch":1,"step":1,"examples":64,"loss":2.3,"metrics":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"metric_%06d":0.%d`, i, i%10)
	}
	b.WriteString("}}\n")
	return dir, os.WriteFile(filepath.Join(dir, runlog.FileName), []byte(b.String()), 0o644)
}

// plotManyMetrics is what plumb plot does with the log of n metric names:
// Read refuses it (more names than runlog.DefaultLimits allow); read with
// the limit raised, Draw draws 16 of them and names the rest. It returns
// an error saying what went otherwise.
func plotManyMetrics(n int) error {
	dir, err := manyMetrics(n)
	if err != nil {
		return err
	}
	_, err = runlog.Read(dir)
	if want := "more than 256 metric names in the log (Limits.Metrics)"; err == nil || !strings.Contains(err.Error(), want) {
		return fmt.Errorf("%d names: Read gave %v; want an error containing %q", n, err, want)
	}
	run, err := runlog.ReadLimits(dir, runlog.Limits{Metrics: n})
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "plot.png")
	omitted, err := Draw([]*runlog.Run{run}, path, Options{})
	if err != nil {
		return err
	}
	if len(omitted) != n-16 || omitted[0] != "metric_000016" {
		return fmt.Errorf("%d names: %d left out, the first %q; want %d, the first metric_000016", n, len(omitted), omitted[0], n-16)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		return err
	}
	// 18 panels, two a row, 6 × 4 inches each at 96 dpi, under the strip
	// of one run's legend
	if want := 9*4*96 + int(math.Round(legendHeight(1).Dots(96))); cfg.Width != 12*96 || cfg.Height < want-1 || cfg.Height > want+1 {
		return fmt.Errorf("%d names: a %d × %d image; want 1152 × %d", n, cfg.Width, cfg.Height, want)
	}
	return nil
}

// A log of 2,000 or 8,000 metric names (40 to 160 KB) ends in a clear
// error from Read, or, with the limit raised, in a bounded plot of 16
// metrics and the names of the rest: within 10 s, under a 512 MiB cap on
// the address space.
func TestPlotManyMetricsUnderMemoryLimit(t *testing.T) {
	began := time.Now()
	msg := memlimit.Run(t, 512, func() error {
		for _, n := range []int{2000, 8000} {
			if err := plotManyMetrics(n); err != nil {
				return err
			}
		}
		return nil
	})
	assert.Empty(t, msg)
	assert.Less(t, time.Since(began), 10*time.Second)
}

// Curves longer than MaxPoints are thinned evenly, keeping both ends.
func TestThin(t *testing.T) {
	curve := make(plotter.XYs, 101)
	for i := range curve {
		curve[i] = plotter.XY{X: float64(i), Y: float64(i * i)}
	}
	out := thin(curve, 5)
	assert.Equal(t, plotter.XYs{{X: 0, Y: 0}, {X: 25, Y: 625}, {X: 50, Y: 2500}, {X: 75, Y: 5625}, {X: 100, Y: 10000}}, out)
	assert.Equal(t, curve, thin(curve, 101))
}
