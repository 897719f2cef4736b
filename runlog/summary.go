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

// Table is a markdown table of runs side by side: each run's own
// evaluation metrics after the epochs it ran (a column for every metric any
// of them logged, by name: accuracy, bleu, f1, mse, test_cost..., in the
// units the console prints, see Display), its training rate in its own
// unit, peak RSS, training loss, wall time and how it ended (from its end
// record); a value a run did not log shows as "–".
func Table(runs []*Run) string {
	var names []string
	seen := map[string]bool{}
	sums := make([]Summary, len(runs))
	for i, r := range runs {
		sums[i] = Summarize(r)
		if r == nil || len(r.Epochs) == 0 {
			continue
		}
		for k := range r.Epochs[len(r.Epochs)-1].Metrics {
			if !seen[k] {
				seen[k] = true
				names = append(names, k)
			}
		}
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("| run | epochs |")
	for _, k := range names {
		b.WriteString(" " + Display(k).Header(k) + " |")
	}
	b.WriteString(" rate | peak RSS (MiB) | train loss | wall (s) | ended |\n|---|---:|")
	b.WriteString(strings.Repeat("---:|", len(names)))
	b.WriteString("---:|---:|---:|---:|---|\n")
	for i, s := range sums {
		fmt.Fprintf(&b, "| %s | %d |", s.Label, s.Epochs)
		for _, k := range names {
			d := Display(k)
			b.WriteString(" " + s.format(k, d.Verb, d.Scale) + " |")
		}
		rate := s.format(SamplesPerSec, "%.0f", 1)
		if rate != "–" {
			rate += " " + runs[i].Unit() + "/s"
		}
		ended := "–"
		if runs[i] != nil && runs[i].End != nil {
			ended = runs[i].End.Reason
		}
		fmt.Fprintf(&b, " %s | %s | %s | %s | %s |\n", rate, s.format(PeakRSSMiB, "%.0f", 1),
			s.format(TrainLoss, "%.4f", 1), s.format(WallSeconds, "%.1f", 1), ended)
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
