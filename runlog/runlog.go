// Package runlog writes and reads run logs: one JSON object per line, a
// "run" record first (which framework trained which model, and how), then
// one "step" record per logged training step and one "epoch" record per
// epoch; a resumed run appends a "resume" record and goes on in the same
// file, and a run that ends (finished, stopped, interrupted or failed)
// writes an "end" record saying why. Plumb's trainer writes them (train.LogTo); the TensorFlow and
// PyTorch scripts in bench/ write the same format, so that runs of any of
// them can be tabulated (Table), checked against KPIs (bench/kpi) and
// plotted together (runlog/plot).
//
// The file is DIR/log.jsonl. Fields:
//
//	kind            "run", "step", "epoch", "resume" or "end"
//	framework       "plumb", "tensorflow", "pytorch" (run)
//	model           the recipe's name, e.g. "mnist-cnn" (run)
//	unit            what the run's examples are: "images", "reviews", "target words" (run; default "samples")
//	reason          why the run ended: "finished", "interrupted", "stopped: ...", "error: ..." (end)
//	config          free-form settings: batch, lr, seed, train_size... (run)
//	epoch           1-based (step, epoch); resume: the epoch it goes on in
//	step            optimizer steps since the run began (step, epoch); resume: the last step kept
//	examples        training examples seen since the run began (step, epoch)
//	loss            step: mean training loss of the epoch so far; epoch: of the whole epoch
//	metrics         the evaluator's named metrics, e.g. {"accuracy": 0.98} (epoch)
//	samples_per_sec training throughput of the epoch so far
//	lr              learning rate of the step
//	rss_bytes       resident set size, and peak_rss_bytes its peak so far
//	wall_s          seconds since the run began
//
// The log is append-only and crash-safe: each record is one write of one
// whole line (Writer), a resumed run appends (Append), the readers skip a
// torn last line with a warning, and they read within Limits (size, line
// length, records, metric names and values), which ParseLimits and
// ReadLimits raise.
package runlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	// KindResume marks where a resumed run goes on: its Epoch is the
	// epoch it resumes in, its Step the last step of the earlier run that
	// it keeps, its Config the resumed run's settings. Records of the
	// earlier run after that step were undone by the resume.
	KindResume = "resume"
	// KindEnd closes a run's log: its Reason says why the run ended
	// (ReasonFinished, ReasonInterrupted, or what stopped or failed it),
	// its Epoch and Step where. A resumed run's log may hold several, one
	// per session; the last says how the run stands.
	KindEnd = "end"
)

// The reasons of an end record that are not free text.
const (
	ReasonFinished    = "finished"
	ReasonInterrupted = "interrupted"
)

// DefaultUnit is what a run's examples are called when its run record
// names no Unit.
const DefaultUnit = "samples"

// Record is one line of a run log; see the package doc for the fields.
type Record struct {
	Kind          string             `json:"kind"`
	Framework     string             `json:"framework,omitempty"`
	Model         string             `json:"model,omitempty"`
	Unit          string             `json:"unit,omitempty"`
	Reason        string             `json:"reason,omitempty"`
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

// Writer appends records to a run directory's log. Each record is one
// write of one whole line to a file opened for appending, so a crash
// leaves at most a torn last line, which Parse skips. After a failed write
// (a full disk) the Writer cuts the partial line off again, when it can,
// and refuses every later record with the same error: the log stays a
// prefix of the run, never a log with a hole. A Writer is not safe for
// concurrent use.
type Writer struct {
	f     *os.File  // the log file (nil for NewWriter's)
	out   io.Writer // f, or NewWriter's writer
	name  string    // for errors
	off   int64     // bytes of whole records in f
	began time.Time // the wall time's origin
	err   error     // the first failed write's error, returned ever after

	// Set by Append over an existing log: the resume record Resume
	// writes, and the step and examples of the records it keeps.
	pending *Record
	prior   []point

	mirror Mirror    // SetMirror's copy of every record, or nil
	warn   io.Writer // where a failing mirror is reported, once
}

// Mirror is a second destination for a run log's records, such as
// TensorBoard's event files (runlog/tensorboard/tblog.Mirror): Write gets
// each record as the log wrote it, wall time and RSS filled in, so that the
// two hold the same values.
type Mirror interface {
	Write(r Record, wall time.Time) error
	Close() error
}

// SetMirror sends every record written from now on to m as well, after it
// is in the log. The log stays the record of the run: when m fails, the
// Writer prints one warning to warn, closes m and writes on without it.
// Close closes m.
func (w *Writer) SetMirror(m Mirror, warn io.Writer) {
	if w == nil {
		return
	}
	w.mirror, w.warn = m, warn
}

// point is where a logged record stood: its step and examples.
type point struct{ step, examples int64 }

// Create makes dir (if needed) and starts its log with run, a KindRun
// record (Kind is set); an existing log there is replaced (Append keeps
// it, Start refuses it). The log must be a regular file, not a FIFO or a device.
func Create(dir string, run Record) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	path := filepath.Join(dir, FileName)
	if err := checkRegular(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	w := &Writer{f: f, out: f, name: path, began: time.Now()}
	run.Kind = KindRun
	if err := w.Write(run); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// ErrExists is the error of Start over a run directory whose log already
// holds records: a fresh run would replace them.
var ErrExists = errors.New("runlog: the run directory already holds a run log")

// Start begins a fresh run's log in dir, as Create does, but refuses a
// dir whose log already holds records, with an error that wraps ErrExists
// and names the file: a second run into the same directory would replace
// the first one's records (Create) or mix two runs' curves in one log. A
// resumed run continues its log with Append instead. An empty log file is
// replaced, as is a missing one created.
func Start(dir string, run Record) (*Writer, error) {
	path := filepath.Join(dir, FileName)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
		return nil, fmt.Errorf("%w: %s (%d bytes); resume that run to append to its log, or log this run into another directory",
			ErrExists, path, st.Size())
	}
	return Create(dir, run)
}

// Append continues the log in dir for a resumed run: run describes the
// resumed run (as for Create; its Framework must match the log's, and its
// Model, which may name more epochs, becomes the run's), and the log keeps
// every record it has. The resume record is
// written by Resume, when the trainer knows the step it goes on after; the
// wall time goes on from the log's last record. A torn last line (a crash
// mid-write) is cut off first, the only bytes Append removes. Without a
// log in dir (or with an empty one), Append is Create. The existing log is
// read with DefaultLimits.
func Append(dir string, run Record) (*Writer, error) {
	path := filepath.Join(dir, FileName)
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && st.Mode().IsRegular() && st.Size() == 0 {
		return Create(dir, run)
	}
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	if err := checkRegular(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	p, err := parse(f, DefaultLimits)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("runlog: %s: %w (a resumed run appends to its log)", path, err)
	}
	if m := p.run.Meta; m.Framework != run.Framework {
		f.Close()
		return nil, fmt.Errorf("runlog: %s is the log of a %s run; this run is %s's: resume into a log of the same framework, or log elsewhere",
			path, m.Framework, run.Framework)
	}
	switch {
	case p.tailOK: // a whole record without its newline
		_, err = f.Write([]byte{'\n'})
		p.good = p.end + 1
	case p.end > p.good: // a torn last line
		err = f.Truncate(p.good)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("runlog: %s: %w", path, err)
	}
	var wall float64
	prior := make([]point, 0, len(p.run.Steps)+len(p.run.Epochs))
	for _, r := range append(p.run.Steps, p.run.Epochs...) {
		wall = max(wall, r.Wall)
		prior = append(prior, point{r.Step, r.Examples})
	}
	run.Kind = KindResume
	return &Writer{f: f, out: f, name: path, off: p.good, began: time.Now().Add(-time.Duration(wall * float64(time.Second))),
		pending: &run, prior: prior}, nil
}

// NewWriter returns a Writer that appends records to out (a pipe, or a
// test's writer); it writes no run record of its own and cannot cut off a
// torn line.
func NewWriter(out io.Writer) *Writer {
	if out == nil {
		return nil
	}
	return &Writer{out: out, name: "run log", began: time.Now()}
}

// checkRegular refuses a log path that exists and is not a regular file:
// a FIFO would block the reader or the writer for ever.
func checkRegular(path string) error {
	st, err := os.Stat(path)
	if err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("runlog: %s is not a regular file (mode %v); want a run log file", path, st.Mode().Type())
	}
	return nil
}

// Resume writes the resume record of a log continued by Append: the run
// goes on in epoch after step, the last step of the earlier run it keeps.
// It returns the training examples the log counted up to step (scaled from
// the last record before it when none was logged at step itself), from
// which the resumed run's counts go on. On a log made by Create it writes
// nothing and returns 0; it writes at most once.
func (w *Writer) Resume(epoch int, step int64) (int64, error) {
	if w == nil || w.out == nil {
		return 0, errNoWriter
	}
	if w.pending == nil {
		return 0, nil
	}
	r := *w.pending
	w.pending = nil
	r.Epoch, r.Step = epoch, step
	var last point
	for _, p := range w.prior {
		if p.step <= step && p.step >= last.step {
			last = p
		}
	}
	examples := last.examples
	if last.step > 0 && last.step < step {
		examples = int64(float64(last.examples) * float64(step) / float64(last.step))
	}
	w.prior = nil
	return examples, w.Write(r)
}

// Write appends r, filling in the wall time and the RSS when r has none,
// in one write of one line, so that the log is readable while the run goes
// on and a crash tears at most that line.
func (w *Writer) Write(r Record) error {
	if w == nil || w.out == nil {
		return errNoWriter
	}
	if w.err != nil {
		return w.err
	}
	if r.Wall == 0 {
		r.Wall = time.Since(w.began).Seconds()
	}
	if r.RSS == 0 {
		r.RSS, r.PeakRSS = RSS()
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("runlog: %s: record of kind %q: %w", w.name, r.Kind, err)
	}
	b = append(b, '\n')
	n, err := w.out.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = fmt.Errorf("runlog: %s: %w; the log keeps the records before this one and takes no more", w.name, err)
		if n > 0 && w.f != nil {
			if terr := w.f.Truncate(w.off); terr != nil {
				w.err = fmt.Errorf("%w (and cutting off the partial line failed: %v)", w.err, terr)
			}
		}
		return w.err
	}
	w.off += int64(n)
	if w.mirror != nil {
		if err := w.mirror.Write(r, w.began.Add(time.Duration(r.Wall*float64(time.Second)))); err != nil {
			if w.warn != nil {
				fmt.Fprintf(w.warn, "warning: %v (the run log goes on; its mirror stops here)\n", err)
			}
			w.mirror.Close()
			w.mirror = nil
		}
	}
	return nil
}

// Close closes the log.
func (w *Writer) Close() error {
	if w == nil || w.out == nil {
		return errNoWriter
	}
	var merr error
	if w.mirror != nil {
		merr = w.mirror.Close()
		w.mirror = nil
	}
	if w.f == nil {
		return merr
	}
	return errors.Join(w.f.Close(), merr)
}

// errNoWriter is the error of a Writer not made by Create, Append or
// NewWriter.
var errNoWriter = errors.New("runlog: a Writer not made by Create, Append or NewWriter")

// Run is a run log read back.
type Run struct {
	Name    string   // the run directory's base name
	Meta    Record   // the KindRun record
	Steps   []Record // in the order logged, less those a resume undid
	Epochs  []Record
	Resumes []Record // the KindResume records (Model, Epoch, Step and Wall only)
	// End is the log's last end record when no resume followed it (how
	// the run ended), or nil for a run still going or killed outright.
	End *Record
	// Warnings says what Parse skipped: a torn last line.
	Warnings []string
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

// Unit is what the run's examples are called: its run record's Unit, or
// DefaultUnit.
func (r *Run) Unit() string {
	if r == nil || r.Meta.Unit == "" {
		return DefaultUnit
	}
	return r.Meta.Unit
}

// Limits bound what Parse and Read accept, so that a hostile or runaway
// log ends in an error naming the limit rather than in an out-of-memory
// crash: the memory Parse holds is proportional to Records and
// MetricValues, and its time to Bytes. A zero field takes the default's.
type Limits struct {
	Bytes        int64 // the log's size
	LineBytes    int   // one line (one record)
	Records      int   // the records read (run, step, epoch, resume)
	Metrics      int   // distinct metric names in the whole log
	MetricValues int   // metric values in the whole log
}

// DefaultLimits are Parse's and Read's: a 64 MiB log of at most 262,144
// records of at most 1 MiB each, with at most 256 metric names and
// 1,048,576 metric values (a run of 10 million steps logged every 50 fits).
var DefaultLimits = Limits{Bytes: 64 << 20, LineBytes: 1 << 20, Records: 1 << 18, Metrics: 256, MetricValues: 1 << 20}

func (l Limits) orDefault() Limits {
	d := DefaultLimits
	if l.Bytes > 0 {
		d.Bytes = l.Bytes
	}
	if l.LineBytes > 0 {
		d.LineBytes = l.LineBytes
	}
	if l.Records > 0 {
		d.Records = l.Records
	}
	if l.Metrics > 0 {
		d.Metrics = l.Metrics
	}
	if l.MetricValues > 0 {
		d.MetricValues = l.MetricValues
	}
	return d
}

// Read reads the run log at path, a run directory or the log file itself,
// within DefaultLimits.
func Read(path string) (*Run, error) { return ReadLimits(path, DefaultLimits) }

// ReadLimits is Read within lim.
func ReadLimits(path string, lim Limits) (*Run, error) {
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, FileName)
	}
	if err := checkRegular(file); err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	defer f.Close()
	p, err := parse(f, lim.orDefault())
	if err != nil {
		return nil, fmt.Errorf("runlog: %s: %w", file, err)
	}
	run := p.run
	for i, w := range run.Warnings {
		run.Warnings[i] = file + ": " + w
	}
	run.Name = filepath.Base(filepath.Dir(file))
	return run, nil
}

// Parse reads a run log from r within DefaultLimits. The first record must
// be of kind "run"; a record of an unknown kind, or a line that is not
// JSON, is an error naming its line. The run's Meta is its first record,
// with the Model of its last resume record. A last line without its newline that
// is not JSON is a write torn by a crash: Parse skips it and says so in
// the Run's Warnings, keeping every record before it. A resume record
// drops the steps and epochs logged before it past its step, which the
// resumed run logs again.
func Parse(r io.Reader) (*Run, error) { return ParseLimits(r, DefaultLimits) }

// ParseLimits is Parse within lim.
func ParseLimits(r io.Reader, lim Limits) (*Run, error) {
	if r == nil {
		return nil, errors.New("runlog: Parse of a nil reader")
	}
	p, err := parse(r, lim.orDefault())
	if err != nil {
		return nil, err
	}
	return p.run, nil
}

// parsed is what parse found: the run, and where the log's whole lines
// end.
type parsed struct {
	run    *Run
	good   int64 // bytes up to the end of the last line with its newline
	end    int64 // bytes read
	tailOK bool  // the bytes after good are a whole record without its newline
}

func parse(r io.Reader, lim Limits) (*parsed, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, lim.Bytes+1), 64<<10)
	p := &parsed{run: &Run{}}
	run := p.run
	names := map[string]bool{}
	values, records, line := 0, 0, 0
	var buf []byte
	for {
		buf = buf[:0]
		complete := false
		for {
			chunk, err := br.ReadSlice('\n')
			if len(buf)+len(chunk) > lim.LineBytes+1 {
				return nil, fmt.Errorf("line %d (offset %d): longer than %d bytes (Limits.LineBytes); want one JSON record a line", line+1, p.end, lim.LineBytes)
			}
			buf = append(buf, chunk...)
			if err == nil {
				complete = true
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("line %d (offset %d): %w", line+1, p.end, err)
		}
		if len(buf) == 0 {
			break
		}
		line++
		start := p.end
		p.end += int64(len(buf))
		if p.end > lim.Bytes {
			return nil, fmt.Errorf("line %d (offset %d): the log is longer than %d bytes (Limits.Bytes)", line, start, lim.Bytes)
		}
		text := bytes.TrimSpace(buf)
		if len(text) == 0 {
			if complete {
				p.good = p.end
			}
			continue
		}
		var rec Record
		if err := json.Unmarshal(text, &rec); err != nil {
			if !complete {
				run.Warnings = append(run.Warnings, fmt.Sprintf("line %d (offset %d): skipped a torn last line (%d bytes without a newline: %v)", line, start, len(buf), err))
				break
			}
			return nil, fmt.Errorf("line %d (offset %d): %w; want one JSON record a line", line, start, err)
		}
		if complete {
			p.good = p.end
		} else {
			p.tailOK = true
		}
		if records++; records > lim.Records {
			return nil, fmt.Errorf("line %d (offset %d): more than %d records (Limits.Records)", line, start, lim.Records)
		}
		for k := range rec.Metrics {
			if !names[k] {
				if names[k] = true; len(names) > lim.Metrics {
					return nil, fmt.Errorf("line %d (offset %d): more than %d metric names in the log (Limits.Metrics)", line, start, lim.Metrics)
				}
			}
		}
		if values += len(rec.Metrics); values > lim.MetricValues {
			return nil, fmt.Errorf("line %d (offset %d): more than %d metric values in the log (Limits.MetricValues)", line, start, lim.MetricValues)
		}
		first := run.Meta.Kind == ""
		switch {
		case first && rec.Kind != KindRun:
			return nil, fmt.Errorf("line %d: kind %q; a run log begins with a %q record", line, rec.Kind, KindRun)
		case first:
			run.Meta = rec
		case rec.Kind == KindStep:
			run.Steps = append(run.Steps, rec)
		case rec.Kind == KindEpoch:
			run.Epochs = append(run.Epochs, rec)
		case rec.Kind == KindResume:
			run.Resumes = append(run.Resumes, Record{Kind: KindResume, Model: rec.Model, Epoch: rec.Epoch, Step: rec.Step, Wall: rec.Wall})
			run.End = nil        // the run went on
			if rec.Model != "" { // the resumed run's recipe (more epochs, say) is the run's
				run.Meta.Model = rec.Model
			}
			// Drop, from the end, what the resumed run logs again: each
			// record is dropped at most once, so this stays linear.
			for n := len(run.Steps); n > 0 && run.Steps[n-1].Step > rec.Step; n-- {
				run.Steps = run.Steps[:n-1]
			}
			for n := len(run.Epochs); n > 0 && run.Epochs[n-1].Step > rec.Step; n-- {
				run.Epochs = run.Epochs[:n-1]
			}
		case rec.Kind == KindEnd:
			end := Record{Kind: KindEnd, Reason: rec.Reason, Epoch: rec.Epoch, Step: rec.Step, Examples: rec.Examples, Wall: rec.Wall,
				RSS: rec.RSS, PeakRSS: rec.PeakRSS}
			run.End = &end
		default:
			return nil, fmt.Errorf("line %d: record of kind %q; want %q, %q, %q or %q after the first", line, rec.Kind, KindStep, KindEpoch, KindResume, KindEnd)
		}
	}
	if run.Meta.Kind == "" {
		if len(run.Warnings) > 0 {
			return nil, fmt.Errorf("no whole record: %s", run.Warnings[0])
		}
		return nil, errors.New("empty run log")
	}
	return p, nil
}
