// Package plot draws run logs (package runlog) as curves in a PNG with
// gonum.org/v1/plot: one panel for the training loss against the
// examples seen (in the runs' unit: images, target words), one per
// evaluation metric against the epoch, in the units the console prints
// (accuracy in %, BLEU in points: runlog.Display), one for the resident
// memory against wall time, with one line per run, so that runs of Plumb,
// TensorFlow and PyTorch overlay. The legend, the same for every panel, is
// drawn once above the panels, outside the data.
//
// What it draws is bounded (Options): at most DefaultOptions.MaxMetrics
// metric panels (the first by name; Draw returns the names it leaves
// out), MaxPoints points a curve (a longer curve is thinned evenly) and
// MaxRuns runs, so that the image's size, memory and time stay bounded
// whatever the logs hold.
package plot

import (
	"fmt"
	"maps"
	"math"
	"os"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/plumbml/plumb/runlog"
)

// panel is one chart: a title, axis labels, and a curve per run.
type panel struct {
	title, x, y string
	curve       func(r *runlog.Run) plotter.XYs
	points      bool // draw the points too (few of them: per epoch)
}

// Options bound what Draw draws; a zero field takes DefaultOptions'.
type Options struct {
	MaxMetrics int // evaluation metric panels; the rest are left out
	MaxPoints  int // points a curve; a longer curve is thinned evenly
	MaxRuns    int // runs in one figure; more is an error
}

// DefaultOptions draw 16 metrics, 2,000 points a curve and 16 runs: an
// image of at most 1152 × 3456 pixels.
var DefaultOptions = Options{MaxMetrics: 16, MaxPoints: 2000, MaxRuns: 16}

func (o Options) orDefault() Options {
	d := DefaultOptions
	if o.MaxMetrics > 0 {
		d.MaxMetrics = o.MaxMetrics
	}
	if o.MaxPoints > 0 {
		d.MaxPoints = o.MaxPoints
	}
	if o.MaxRuns > 0 {
		d.MaxRuns = o.MaxRuns
	}
	return d
}

// thin keeps at most n of xy's points, evenly spaced, the last among them.
func thin(xy plotter.XYs, n int) plotter.XYs {
	if len(xy) <= n || n < 2 {
		return xy
	}
	out := make(plotter.XYs, n)
	for i := range n {
		out[i] = xy[i*(len(xy)-1)/(n-1)]
	}
	return out
}

// panels lists the charts for runs: the training loss, each evaluation
// metric any run logged (the first maxMetrics by name; the names of the rest are
// returned), and the RSS.
func panels(runs []*runlog.Run, maxMetrics int) ([]panel, []string) {
	unit := runs[0].Unit()
	for _, r := range runs[1:] {
		if r.Unit() != unit {
			unit = "examples"
		}
	}
	ps := []panel{{title: "training loss (mean of the epoch so far)", x: "thousand " + unit + " seen", y: "loss",
		curve: func(r *runlog.Run) plotter.XYs {
			var xy plotter.XYs
			for _, s := range r.Steps {
				xy = append(xy, plotter.XY{X: float64(s.Examples) / 1000, Y: s.Loss})
			}
			return xy
		}}}
	seen := map[string]bool{} // a set keeps this linear in the names
	for _, r := range runs {
		for _, e := range r.Epochs {
			for k := range e.Metrics {
				seen[k] = true
			}
		}
	}
	names := slices.Sorted(maps.Keys(seen))
	var omitted []string
	if len(names) > maxMetrics {
		names, omitted = names[:maxMetrics], names[maxMetrics:]
	}
	for _, name := range names {
		show := runlog.Display(name)
		ps = append(ps, panel{title: "evaluation: " + name, x: "epoch", y: show.Header(name), points: true,
			curve: func(r *runlog.Run) plotter.XYs {
				var xy plotter.XYs
				for _, e := range r.Epochs {
					if v, ok := e.Metrics[name]; ok {
						xy = append(xy, plotter.XY{X: float64(e.Epoch), Y: v * show.Scale})
					}
				}
				return xy
			}})
	}
	return append(ps, panel{title: "resident memory", x: "wall time (s)", y: "RSS (MiB)",
		curve: func(r *runlog.Run) plotter.XYs {
			var xy plotter.XYs
			for _, s := range slices.Concat(r.Steps, r.Epochs) {
				if s.RSS > 0 {
					xy = append(xy, plotter.XY{X: s.Wall, Y: float64(s.RSS) / (1 << 20)})
				}
			}
			slices.SortFunc(xy, func(a, b plotter.XY) int {
				switch {
				case a.X < b.X:
					return -1
				case a.X > b.X:
					return 1
				}
				return 0
			})
			return xy
		}}), omitted
}

// Runs draws runs into a PNG at path, two panels to a row, within
// DefaultOptions; it leaves out the metrics past the 16th by name without
// saying so (Draw returns them).
func Runs(runs []*runlog.Run, path string) error {
	_, err := Draw(runs, path, DefaultOptions)
	return err
}

// Draw draws runs into a PNG at path, two panels to a row, within opts,
// and returns the names of the metrics it left out.
func Draw(runs []*runlog.Run, path string, opts Options) (omitted []string, err error) {
	opts = opts.orDefault()
	if len(runs) == 0 {
		return nil, fmt.Errorf("plot: no runs to draw")
	}
	if len(runs) > opts.MaxRuns {
		return nil, fmt.Errorf("plot: %d runs; at most %d in one figure (Options.MaxRuns)", len(runs), opts.MaxRuns)
	}
	for i, r := range runs {
		if r == nil {
			return nil, fmt.Errorf("plot: run %d is nil", i)
		}
	}
	ps, omitted := panels(runs, opts.MaxMetrics)
	const cols = 2
	rows := (len(ps) + cols - 1) / cols
	grid := make([][]*gplot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*gplot.Plot, cols)
	}
	legend := gplot.NewLegend()
	legend.Top, legend.Left, legend.Padding = true, true, 0.04*vg.Inch
	for k, r := range runs {
		line, pts, err := plotter.NewLinePoints(plotter.XYs{{}})
		if err != nil {
			return nil, fmt.Errorf("plot: legend: %w", err)
		}
		style(line, pts, k)
		legend.Add(r.Label(), line, pts)
	}
	for i, pn := range ps {
		p := gplot.New()
		p.Title.Text, p.X.Label.Text, p.Y.Label.Text = pn.title, pn.x, pn.y
		p.Add(plotter.NewGrid())
		lo, hi := math.Inf(1), math.Inf(-1)
		for k, r := range runs {
			xy := thin(pn.curve(r), opts.MaxPoints)
			if len(xy) == 0 {
				continue
			}
			for _, q := range xy {
				lo, hi = min(lo, q.Y), max(hi, q.Y)
			}
			line, pts, err := plotter.NewLinePoints(xy)
			if err != nil {
				return nil, fmt.Errorf("plot: %s of %s: %w", pn.title, r.Label(), err)
			}
			style(line, pts, k)
			p.Add(line)
			if pn.points || len(xy) == 1 {
				p.Add(pts)
			}
		}
		switch {
		case lo > hi, math.Abs(lo) > 1e300, math.Abs(hi) > 1e300: // no data, or values too large for the margins' arithmetic
		case hi-lo <= 1e-9*max(1, math.Abs(hi)): // one value (one epoch): a narrow axis around it
			d := max(0.02*math.Abs(hi), 0.01)
			p.Y.Min, p.Y.Max = lo-d, hi+4*d
		default:
			p.Y.Min, p.Y.Max = lo-0.02*(hi-lo), hi+0.02*(hi-lo)
		}
		grid[i/cols][i%cols] = p
	}
	panelsH := vg.Length(rows) * 4 * vg.Inch
	legendH := legendHeight(len(runs))
	img := vgimg.NewWith(vgimg.UseWH(vg.Length(cols)*6*vg.Inch, panelsH+legendH), vgimg.UseDPI(96))
	dc := draw.New(img)
	pad := vg.Millimeter * 4
	legend.Draw(draw.Crop(dc, pad, -pad, panelsH, -pad/2)) // the strip above the panels
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: pad, PadBottom: pad, PadLeft: pad, PadRight: pad}
	canvases := gplot.Align(grid, tiles, draw.Crop(dc, 0, 0, 0, -legendH))
	for j := range rows {
		for i := range cols {
			if grid[j][i] != nil {
				grid[j][i].Draw(canvases[j][i])
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("plot: write %s: %w", path, err)
	}
	return omitted, f.Close()
}

// legendHeight is the height of the strip above the panels that holds the
// legend of n runs, one line each.
func legendHeight(n int) vg.Length {
	return vg.Length(n)*0.26*vg.Inch + 0.15*vg.Inch
}

// style gives run k's line and points their colour, dashes and shape, the
// same in every panel and in the legend.
func style(line *plotter.Line, pts *plotter.Scatter, k int) {
	line.Color, line.Width, line.Dashes = plotutil.Color(k), vg.Points(1.5), plotutil.Dashes(k)
	pts.Color, pts.Shape = plotutil.Color(k), plotutil.Shape(k)
}
