package runlog

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Summary is what a comparison table shows of a run.
type Summary struct {
	Label, Framework, Model string
	Epochs                  int
	Values                  map[string]float64 // see Summarize
}

// The values Summarize derives; besides them, a summary holds every metric
// of the last epoch under its own name ("accuracy", "loss", ...).
const (
	SamplesPerSec = "samples_per_sec" // training throughput, the mean of the epochs'
	PeakRSSMiB    = "peak_rss_mib"    // the largest peak RSS logged, in MiB
	TrainLoss     = "train_loss"      // the last epoch's training loss
	WallSeconds   = "wall_s"          // the last record's wall time
)

// Summarize reduces a run to its table row.
func Summarize(r *Run) Summary {
	if r == nil {
		return Summary{Values: map[string]float64{}}
	}
	s := Summary{Label: r.Label(), Framework: r.Meta.Framework, Model: r.Meta.Model, Epochs: len(r.Epochs), Values: map[string]float64{}}
	var peak int64
	var wall, rate float64
	for _, rec := range slices.Concat([]Record{r.Meta}, r.Steps, r.Epochs) {
		peak = max(peak, rec.PeakRSS, rec.RSS)
		wall = max(wall, rec.Wall)
	}
	for _, e := range r.Epochs {
		rate += e.SamplesPerSec / float64(len(r.Epochs))
	}
	if n := len(r.Epochs); n > 0 {
		last := r.Epochs[n-1]
		for k, v := range last.Metrics {
			s.Values[k] = v
		}
		s.Values[TrainLoss] = last.Loss
		s.Values[SamplesPerSec] = rate
	}
	if peak > 0 {
		s.Values[PeakRSSMiB] = float64(peak) / (1 << 20)
	}
	if wall > 0 {
		s.Values[WallSeconds] = wall
	}
	return s
}

// Table is a markdown table of runs side by side: test accuracy after
// the epochs each ran, training instances per second, peak RSS, training
// loss and wall time; a value a run did not log shows as "–".
func Table(runs []*Run) string {
	var b strings.Builder
	b.WriteString("| run | epochs | test accuracy | instances/s | peak RSS (MiB) | train loss | wall (s) |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range runs {
		s := Summarize(r)
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", s.Label, s.Epochs,
			s.format("accuracy", "%.2f%%", 100), s.format(SamplesPerSec, "%.0f", 1), s.format(PeakRSSMiB, "%.0f", 1),
			s.format(TrainLoss, "%.4f", 1), s.format(WallSeconds, "%.1f", 1))
	}
	return b.String()
}

func (s Summary) format(key, verb string, scale float64) string {
	v, ok := s.Values[key]
	if !ok || math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf(verb, v*scale)
}
