// Package tblog maps Plumb's run-log records (package runlog) to
// TensorBoard scalars (package tensorboard), so that a run logged with
// --log can be shown by `tensorboard --logdir` beside Keras and PyTorch
// runs. Mirror writes the scalars as the records are logged; Convert
// writes them afterwards from a run directory's log.jsonl.
//
// Every scalar is placed at the record's Step (optimizer steps since the
// run began). Tags, with the run-log field each comes from:
//
//	step record:  loss, lr, samples_per_sec, rss_bytes, peak_rss_bytes
//	epoch record: epoch_loss, epoch_samples_per_sec, epoch_<metric> for
//	              each of Metrics (e.g. epoch_accuracy, as Keras names
//	              its epoch scalars)
//
// A zero field is left out (the run log omits zero fields, so it cannot
// tell a zero from an absent value), except metrics, which are kept.
package tblog

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/runlog/tensorboard"
)

// Scalars returns the TensorBoard scalars of one run-log record by tag;
// records other than steps and epochs have none.
func Scalars(r runlog.Record) map[string]float64 {
	s := map[string]float64{}
	put := func(tag string, v float64) {
		if v != 0 {
			s[tag] = v
		}
	}
	switch r.Kind {
	case runlog.KindStep:
		put("loss", r.Loss)
		put("lr", r.LR)
		put("samples_per_sec", r.SamplesPerSec)
		put("rss_bytes", float64(r.RSS))
		put("peak_rss_bytes", float64(r.PeakRSS))
	case runlog.KindEpoch:
		put("epoch_loss", r.Loss)
		put("epoch_samples_per_sec", r.SamplesPerSec)
		for name, v := range r.Metrics {
			s["epoch_"+name] = v
		}
	}
	return s
}

// Mirror writes the scalars of run-log records to an event file.
type Mirror struct {
	w *tensorboard.Writer
}

// NewMirror starts an event file in dir (a run directory).
func NewMirror(dir string) (*Mirror, error) {
	w, err := tensorboard.Create(dir)
	if err != nil {
		return nil, err
	}
	return &Mirror{w}, nil
}

// Write writes r's scalars as one event at r.Step; wall is when r was
// logged (zero: now). Give it the record as runlog.Writer.Write completed
// it (Wall, RSS and PeakRSS filled in), so that the event file holds the
// values of the log.
func (m *Mirror) Write(r runlog.Record, wall time.Time) error {
	if m == nil {
		return errNoMirror
	}
	return m.w.Scalars(r.Step, Scalars(r), wall)
}

// errNoMirror is the error of a nil Mirror.
var errNoMirror = errors.New("tblog: a nil Mirror")

// Name returns the event file's path.
func (m *Mirror) Name() string {
	if m == nil {
		return ""
	}
	return m.w.Name()
}

// Close closes the event file.
func (m *Mirror) Close() error {
	if m == nil {
		return errNoMirror
	}
	return m.w.Close()
}

// Convert writes the scalars of the run log in dir (runlog.Read: the steps
// and epochs a resume kept) to a new event file in dir and returns its
// path. The log holds only seconds since the run began (wall_s); the
// run's start is taken as the log's modification time less its last
// record's wall_s, so the events' relative times are the log's. It
// refuses a directory that already holds an event file, which would
// show every scalar twice.
func Convert(dir string) (string, error) {
	run, err := runlog.Read(dir)
	if err != nil {
		return "", err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("tblog: %w", err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tensorboard.FilePrefix) {
			return "", fmt.Errorf("tblog: %s already holds the event file %s", dir, e.Name())
		}
	}
	recs := make([]runlog.Record, 0, len(run.Steps)+len(run.Epochs))
	recs = append(recs, run.Steps...)
	recs = append(recs, run.Epochs...)
	// Steps and epochs interleaved as logged: by step, an epoch after the
	// step records of its last step.
	sortRecords(recs)
	fi, err := os.Stat(filepath.Join(dir, runlog.FileName))
	if err != nil {
		return "", fmt.Errorf("tblog: %w", err)
	}
	last := 0.0
	for _, r := range recs {
		last = max(last, r.Wall)
	}
	start := fi.ModTime().Add(-time.Duration(last * float64(time.Second)))
	m, err := NewMirror(dir)
	if err != nil {
		return "", err
	}
	for _, r := range recs {
		if err := m.Write(r, start.Add(time.Duration(r.Wall*float64(time.Second)))); err != nil {
			return "", errors.Join(err, m.Close())
		}
	}
	return m.Name(), m.Close()
}

// sortRecords orders records by step, steps before epochs at one step,
// stably.
func sortRecords(recs []runlog.Record) {
	rank := func(r runlog.Record) int {
		if r.Kind == runlog.KindEpoch {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(recs, func(a, b runlog.Record) int {
		return cmp.Or(cmp.Compare(a.Step, b.Step), cmp.Compare(rank(a), rank(b)))
	})
}
