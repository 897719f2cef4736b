// Package kpi checks run logs (package runlog) against key performance
// indicators: per model and metric, a baseline and how much worse than it
// a run may be. A check fails only when a run is worse than its baseline
// by more than the tolerance, never when it is better; so an accuracy KPI,
// which is deterministic, can be tight, and a speed KPI, which depends on
// the machine and its load, is given a generous tolerance.
//
// The file (bench/kpi.json) is a JSON list:
//
//	[{"model": "mnist-cnn", "metric": "accuracy", "baseline": 0.9829,
//	  "tolerance": 0.003, "higher_is_better": true}, ...]
//
// metric names a value of runlog.Summarize: a metric of the run's last
// epoch ("accuracy", "loss"), "samples_per_sec", "peak_rss_mib",
// "train_loss" or "wall_s". A relative tolerance is a fraction of the
// baseline.
//
// A speed depends on how busy the machine is, so a speed KPI may be
// relative to a reference benchmark: "reference" is the reference's score
// (MeasureReference: GFLOP/s of fixed float32 matrix products, the kernel
// that dominates training) measured beside the baseline, on the same
// machine and at the same load. CheckReference scales such a baseline by
// the reference measured now over that score, so that a machine running
// at half speed (busy, or slower) expects half the throughput and a
// healthy build passes on it, while a kernel that got slower relative to
// the machine still fails. The file Plumb checks in CI is embedded in the
// plumb binary (package bench, bench/kpi.json).
package kpi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/plumbml/plumb/runlog"
)

// KPI is one indicator: a model's metric, its baseline and tolerance.
type KPI struct {
	Model          string  `json:"model"`
	Metric         string  `json:"metric"`
	Baseline       float64 `json:"baseline"`
	Tolerance      float64 `json:"tolerance"`
	Relative       bool    `json:"relative,omitempty"`
	HigherIsBetter bool    `json:"higher_is_better"`
	// Reference, when > 0, is MeasureReference's GFLOP/s measured with the
	// baseline: the baseline is scaled by the reference measured at check
	// time over this (CheckReference).
	Reference float64 `json:"reference,omitempty"`
	Note      string  `json:"note,omitempty"`
}

// MaxFileBytes bounds a KPI file (Load, Parse): a file of KPIs is a few
// kilobytes, and a larger one is refused before it is read into memory.
// MaxEntries bounds its entries.
const (
	MaxFileBytes = 1 << 20
	MaxEntries   = 10000
)

// Load reads a KPI file (a regular file of at most MaxFileBytes) and
// checks every entry, as Parse does.
func Load(path string) ([]KPI, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("kpi: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("kpi: %s is not a regular file (mode %v); want a JSON list of KPIs", path, st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("kpi: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a KPI file's JSON list from r (name names it in errors) and
// checks every entry: each needs a model, a metric, a tolerance >= 0 and,
// when relative, a baseline other than 0; unknown fields, anything after
// the list, more than MaxFileBytes or more than MaxEntries are errors,
// which name the byte offset or the entry.
func Parse(r io.Reader, name string) ([]KPI, error) {
	if r == nil {
		return nil, errors.New("kpi: Parse of a nil reader")
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("kpi: %s: %w", name, err)
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("kpi: %s: longer than %d bytes (kpi.MaxFileBytes); want a JSON list of KPIs", name, MaxFileBytes)
	}
	var ks []KPI
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ks); err != nil {
		return nil, fmt.Errorf("kpi: %s: offset %d: %w; want a JSON list of KPIs", name, dec.InputOffset(), err)
	}
	if rest := bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return nil, fmt.Errorf("kpi: %s: offset %d: data after the list of KPIs", name, len(b)-len(rest))
	}
	if len(ks) > MaxEntries {
		return nil, fmt.Errorf("kpi: %s: %d entries; at most %d (kpi.MaxEntries)", name, len(ks), MaxEntries)
	}
	for i, k := range ks {
		if k.Model == "" || k.Metric == "" || !(k.Tolerance >= 0) || (k.Relative && k.Baseline == 0) {
			return nil, fmt.Errorf("kpi: %s: entry %d (%q %q): want a model, a metric, a tolerance >= 0 and, if relative, a baseline other than 0", name, i, k.Model, k.Metric)
		}
		if !(k.Reference >= 0) || math.IsInf(k.Reference, 0) {
			return nil, fmt.Errorf("kpi: %s: entry %d (%q %q): reference %v; want the reference benchmark's GFLOP/s (> 0), or none", name, i, k.Model, k.Metric, k.Reference)
		}
	}
	return ks, nil
}

// Result is one KPI checked on one run; its Baseline is the one checked
// (scaled by Scale for a KPI with a Reference).
type Result struct {
	KPI
	Scale  float64 // the reference measured now over the KPI's Reference (1 without one)
	Run    string  // the run's label
	Value  float64 // what the run measured
	Logged bool    // the run logged the metric
	Worse  float64 // how much worse than the baseline (negative: better), in the tolerance's units
	Pass   bool
}

// Limit is the worst value the KPI accepts.
func (k KPI) Limit() float64 {
	tol := k.Tolerance
	if k.Relative {
		tol *= abs(k.Baseline)
	}
	if k.HigherIsBetter {
		return k.Baseline - tol
	}
	return k.Baseline + tol
}

// Check checks every run of framework "plumb" against the KPIs of its
// model. A run that did not log a KPI's metric fails it. It is an error
// when no KPI applies to any run, so that a mistyped model name cannot
// pass unnoticed, and when a KPI that applies is relative to the reference
// benchmark (use CheckReference).
func Check(ks []KPI, runs []*runlog.Run) ([]Result, error) {
	return CheckReference(ks, runs, 0)
}

// CheckReference is Check with ref, the reference benchmark's GFLOP/s
// measured now (MeasureReference) on the machine that ran the runs: the
// baseline of a KPI with a Reference is multiplied by ref/Reference before
// the check. ref <= 0 says that none was measured, which is an error when
// such a KPI applies.
func CheckReference(ks []KPI, runs []*runlog.Run, ref float64) ([]Result, error) {
	var out []Result
	for i, r := range runs {
		if r == nil {
			return nil, fmt.Errorf("kpi: Check: run %d is nil", i)
		}
		if r.Meta.Framework != "plumb" {
			continue
		}
		s := runlog.Summarize(r)
		for _, k := range ks {
			if k.Model != r.Meta.Model {
				continue
			}
			v, ok := s.Values[k.Metric]
			res := Result{KPI: k, Scale: 1, Run: r.Label(), Value: v, Logged: ok}
			if k.Reference > 0 {
				if !(ref > 0) || math.IsInf(ref, 0) {
					return nil, fmt.Errorf("kpi: %s %s is relative to the reference benchmark (%.4g GFLOP/s with its baseline); measure the reference now (MeasureReference), got %v", k.Model, k.Metric, k.Reference, ref)
				}
				res.Scale = ref / k.Reference
				res.Baseline *= res.Scale
			}
			if ok {
				b := res.Baseline
				res.Worse = b - v
				if !k.HigherIsBetter {
					res.Worse = -res.Worse
				}
				if k.Relative {
					res.Worse /= abs(b)
				}
				res.Pass = res.Worse <= k.Tolerance
			}
			out = append(out, res)
		}
	}
	if len(out) == 0 {
		var models []string
		for _, r := range runs {
			models = append(models, fmt.Sprintf("%s %s", r.Meta.Framework, r.Meta.Model))
		}
		return nil, fmt.Errorf("kpi: no KPI applies to the runs given (%s); KPIs are checked on plumb runs of the models the file names", strings.Join(models, ", "))
	}
	return out, nil
}

// ErrFailed is returned by Report when a KPI failed.
var ErrFailed = errors.New("kpi: a KPI is worse than its baseline by more than its tolerance")

// Report prints results as a markdown table and a verdict, and returns
// ErrFailed when any failed.
func Report(w io.Writer, results []Result) error {
	if w == nil {
		return errors.New("kpi: Report: nil writer")
	}
	fmt.Fprintln(w, "| run | metric | value | baseline | worst accepted | verdict |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---|")
	scaled := false
	failed := 0
	for _, r := range results {
		verdict, value := "ok", fmt.Sprintf("%.4g", r.Value)
		switch {
		case !r.Logged:
			verdict, value = "FAIL (not logged)", "–"
		case !r.Pass:
			verdict = "FAIL"
		case r.Worse < 0:
			verdict = "ok (better)"
		}
		if verdict[0] == 'F' {
			failed++
		}
		base := fmt.Sprintf("%.4g", r.Baseline)
		if r.Reference > 0 {
			base = fmt.Sprintf("%.4g (%.4g × %.3g)", r.Baseline, r.Baseline/r.Scale, r.Scale)
			scaled = true
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %.4g | %s |\n", r.Run, r.Metric, value, base, r.Limit(), verdict)
	}
	if scaled {
		fmt.Fprintln(w, "\nbaselines (b × s): b measured beside the reference benchmark, s its speed now over then")
	}
	if failed > 0 {
		fmt.Fprintf(w, "\nKPI check: %d of %d FAILED\n", failed, len(results))
		return ErrFailed
	}
	fmt.Fprintf(w, "\nKPI check: all %d passed\n", len(results))
	return nil
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
