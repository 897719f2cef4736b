// Package runlog writes and reads run logs: one JSON object per line, a
// "run" record first (which framework trained which model, and how), then
// one "step" record per logged training step and one "epoch" record per
// epoch. Plumb's trainer writes them (train.LogTo); the TensorFlow and
// PyTorch scripts in bench/ write the same format, so that runs of any of
// them can be tabulated (Table), checked against KPIs (bench/kpi) and
// plotted together (runlog/plot).
//
// The file is DIR/log.jsonl. Fields:
//
//	kind            "run", "step" or "epoch"
//	framework       "plumb", "tensorflow", "pytorch" (run)
//	model           the recipe's name, e.g. "mnist-cnn" (run)
//	config          free-form settings: batch, lr, seed, train_size... (run)
//	epoch           1-based (step, epoch)
//	step            optimizer steps since the run began (step, epoch)
//	examples        training examples seen since the run began (step, epoch)
//	loss            step: mean training loss of the epoch so far; epoch: of the whole epoch
//	metrics         the evaluator's named metrics, e.g. {"accuracy": 0.98} (epoch)
//	samples_per_sec training throughput of the epoch so far
//	lr              learning rate of the step
//	rss_bytes       resident set size, and peak_rss_bytes its peak so far
//	wall_s          seconds since the run began
package runlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FileName is the log's name inside a run directory.
const FileName = "log.jsonl"

// The kinds of record.
const (
	KindRun   = "run"
	KindStep  = "step"
	KindEpoch = "epoch"
)

// Record is one line of a run log; see the package doc for the fields.
type Record struct {
	Kind          string             `json:"kind"`
	Framework     string             `json:"framework,omitempty"`
	Model         string             `json:"model,omitempty"`
	Config        map[string]any     `json:"config,omitempty"`
	Epoch         int                `json:"epoch,omitempty"`
	Step          int64              `json:"step,omitempty"`
	Examples      int64              `json:"examples,omitempty"`
	Loss          float64            `json:"loss,omitempty"`
	Metrics       map[string]float64 `json:"metrics,omitempty"`
	SamplesPerSec float64            `json:"samples_per_sec,omitempty"`
	LR            float64            `json:"lr,omitempty"`
	RSS           int64              `json:"rss_bytes,omitempty"`
	PeakRSS       int64              `json:"peak_rss_bytes,omitempty"`
	Wall          float64            `json:"wall_s,omitempty"`
}

// Writer appends records to a run directory's log.
type Writer struct {
	f     *os.File
	w     *bufio.Writer
	began time.Time
}

// Create makes dir (if needed) and starts its log with run, a KindRun
// record (Kind is set); an existing log there is replaced.
func Create(dir string, run Record) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, FileName))
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	w := &Writer{f: f, w: bufio.NewWriter(f), began: time.Now()}
	run.Kind = KindRun
	if err := w.Write(run); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Write appends r, filling in the wall time and the RSS when r has none,
// and flushes, so that the log is readable while the run goes on.
func (w *Writer) Write(r Record) error {
	if w == nil || w.w == nil {
		return errNoWriter
	}
	if r.Wall == 0 {
		r.Wall = time.Since(w.began).Seconds()
	}
	if r.RSS == 0 {
		r.RSS, r.PeakRSS = RSS()
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("runlog: %w", err)
	}
	w.w.Write(b)
	w.w.WriteByte('\n')
	if err := w.w.Flush(); err != nil {
		return fmt.Errorf("runlog: %w", err)
	}
	return nil
}

// Close closes the log.
func (w *Writer) Close() error {
	if w == nil || w.f == nil {
		return errNoWriter
	}
	return w.f.Close()
}

// errNoWriter is the error of a Writer not made by Create.
var errNoWriter = errors.New("runlog: a Writer not made by Create")

// Run is a run log read back.
type Run struct {
	Name   string // the run directory's base name
	Meta   Record // the KindRun record
	Steps  []Record
	Epochs []Record
}

// Label names the run in tables and legends: its framework and model,
// and its directory when that says more.
func (r *Run) Label() string {
	l := r.Meta.Framework
	if r.Meta.Model != "" {
		l += " " + r.Meta.Model
	}
	if r.Name != "" && r.Name != r.Meta.Framework && !strings.Contains(l, r.Name) {
		l += " (" + r.Name + ")"
	}
	return strings.TrimSpace(l)
}

// Read reads the run log at path: a run directory or the log file itself.
func Read(path string) (*Run, error) {
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, FileName)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	defer f.Close()
	run, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("runlog: %s: %w", file, err)
	}
	run.Name = filepath.Base(filepath.Dir(file))
	return run, nil
}

// Parse reads a run log from r. The first record must be of kind "run";
// a record of an unknown kind is an error, naming its line.
func Parse(r io.Reader) (*Run, error) {
	if r == nil {
		return nil, errors.New("runlog: Parse of a nil reader")
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	run := &Run{}
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		switch {
		case line == 1 && rec.Kind != KindRun:
			return nil, fmt.Errorf("line 1: kind %q; a run log begins with a %q record", rec.Kind, KindRun)
		case rec.Kind == KindRun && line == 1:
			run.Meta = rec
		case rec.Kind == KindStep:
			run.Steps = append(run.Steps, rec)
		case rec.Kind == KindEpoch:
			run.Epochs = append(run.Epochs, rec)
		default:
			return nil, fmt.Errorf("line %d: record of kind %q; want %q or %q after the first", line, rec.Kind, KindStep, KindEpoch)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if line == 0 {
		return nil, errors.New("empty run log")
	}
	return run, nil
}
