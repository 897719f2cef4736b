// Package chapter is the shape every book chapter's model shares, so that
// one driver (cmd/plumb) trains, evaluates and queries all of them: a
// chapter is a row of one table (Spec), and its Chapter builds the model
// from a configuration (flags, or a checkpoint's metadata), sets up its
// training (data, optimizer, loss, evaluator), and predicts.
//
// A checkpoint knows its model: Meta's entries go into the safetensors
// metadata (checkpoint.SaveMeta) under "plumb/chapter" (the chapter's
// name), "plumb/config" (the model's configuration as JSON, sizes
// included) and whatever else predicting needs (vocabularies, class
// names), so Restore rebuilds the model without being told which.
package chapter

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/train"
)

// Model is what the driver needs of every chapter's network: its
// parameters (what a checkpoint holds) and the loss of a batch, the
// trainer's train.LossFunc.
type Model interface {
	Params() []*graph.Param
	Loss(t *graph.Tape, b *data.Batch) (*graph.Value, int)
}

// Options are the settings every chapter's commands share.
type Options struct {
	Epochs    int     // passes over the training set
	Batch     int     // examples a step
	LR        float64 // learning rate
	Seed      uint64  // initialisation, shuffling, subsets
	Limit     int     // train on a seeded random subset of this many examples (0: all)
	TestLimit int     // evaluate on a seeded random subset of this many (0: all)
	Every     int     // steps between the running-loss lines of the chapters that print them
}

// Setup is a chapter ready to train: the model, the data and the recipe.
type Setup struct {
	Model Model
	// Optimizer makes the optimizer and its schedule (nil for none); the
	// driver calls it after moving the model to its device, so that the
	// optimizer's state is made there.
	Optimizer func() (optim.Optimizer, *train.LR, error)
	RNG       *rand.PCG // the model's randomness, saved with a resumable run, or nil
	Train     train.Source[*data.Batch]
	Evaluate  train.Evaluator
	Monitor   string // the metric that picks the best epoch (train.Config.Monitor)
	Maximize  bool
	// Probe, if set, measures the model on its first n test examples
	// (plumb train --eval-every).
	Probe func(n int) train.Evaluator
	// Describe is the line printed before training: what trains on what.
	Describe string
	// Record is the recipe as the run log keeps it (runlog.Record.Config).
	Record map[string]any
	// RunName, if set, names the run in its log (and so its KPIs); else
	// the driver names it <chapter>[-<model>] and what differs from the
	// book's recipe (-limitN, -epochsN, -batchN).
	RunName string
	// Hooks are the chapter's own (printing a running loss, say).
	Hooks []train.Hooks
	// HostFields are the batch fields the model reads on the host; the
	// trainer moves the others to the model's device
	// (train.Config.HostFields).
	HostFields []string
}

// Input is what predict reads: the files named on the command line, or
// standard input when there are none.
type Input struct {
	Files []string
	Stdin io.Reader
}

// Chapter is one chapter's model family. A value holds one configuration:
// Flags fills it from the command line, Train completes it from the data
// (dictionary sizes, normalisation), Restore from a checkpoint.
type Chapter interface {
	// Flags declares the chapter's own settings on fs.
	Flags(fs *flag.FlagSet)
	// Train loads the training and evaluation data from dir (the
	// chapter's folder, or the dataset root) and builds a fresh model.
	Train(dir string, o Options, log io.Writer) (*Setup, error)
	// Restore rebuilds the model that a checkpoint's metadata describes
	// (as Meta wrote it), ready to load its parameters into.
	Restore(meta map[string]string) (Model, error)
	// Evaluate loads the evaluation data from dir for m, a model Train or
	// Restore built, and returns its evaluator and a description of the
	// data.
	Evaluate(m Model, dir string, o Options, log io.Writer) (train.Evaluator, string, error)
	// Predict reads in, one input a file or a line, and writes m's
	// prediction for each to out.
	Predict(m Model, in Input, out io.Writer) error
	// Meta is what a checkpoint of the model Train or Restore built needs
	// to rebuild it.
	Meta() (map[string]string, error)
}

// Spec is one chapter: a row of the driver's table.
type Spec struct {
	Name    string   // on the command line: mnist, cifar10, ...
	Title   string   // one line for the usage
	Models  []string // the --model variants, the default first; nil when there is one
	Folders []string // where its data is under a dataset root, e.g. "ptb"
	Unit    string   // what one training example is: images, reviews, ...
	Inputs  string   // what predict reads, for the usage
	// NoData is true when training needs no --data (MNIST's embedded copy).
	NoData bool
	// Best, when set, names the metric whose best epoch --save keeps
	// (train.Config.BestPath), e.g. "held-out F1"; else --save writes the
	// model after training.
	Best   string
	Epochs int     // the book's recipe: passes,
	Batch  int     // examples a step
	LR     float64 // and learning rate
	// New returns a chapter with the book's configuration, which its
	// Flags then change.
	New func() Chapter
}

// The metadata keys every chapter's checkpoint has.
const (
	KeyChapter = "plumb/chapter"
	KeyConfig  = "plumb/config"
)

// EncodeMeta is the metadata of a checkpoint of chapter name's model with
// configuration config (marshalled as JSON) and extra entries.
func EncodeMeta(name string, config any, extra map[string]string) (map[string]string, error) {
	js, err := json.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("%s: model configuration: %w", name, err)
	}
	meta := map[string]string{KeyChapter: name, KeyConfig: string(js)}
	for k, v := range extra {
		meta[k] = v
	}
	return meta, nil
}

// DecodeMeta checks that meta is a checkpoint of chapter name's model and
// unmarshals its configuration into config; unknown fields are errors.
func DecodeMeta(meta map[string]string, name string, config any) error {
	got, ok := meta[KeyChapter]
	switch {
	case !ok:
		return fmt.Errorf("%s: the checkpoint names no chapter in its metadata (%q): it predates checkpoints that know their model, or another program wrote it", name, KeyChapter)
	case got != name:
		return fmt.Errorf("the checkpoint holds a %s model, not a %s one", got, name)
	}
	if err := unmarshalStrict(meta[KeyConfig], config); err != nil {
		return fmt.Errorf("%s: the checkpoint's model configuration (%q): %w", name, KeyConfig, err)
	}
	return nil
}

// vocabJSON is a dictionary as the metadata keeps it: its words by id and
// its unknown word ("" for none).
type vocabJSON struct {
	Words []string `json:"words"`
	Unk   string   `json:"unk"`
}

// VocabMeta is v as a metadata value, which ParseVocab reads.
func VocabMeta(v *data.Vocab) (string, error) {
	if v == nil {
		return "", fmt.Errorf("chapter: VocabMeta of a nil dictionary")
	}
	vj := vocabJSON{Words: v.Words()}
	if id := v.UnkID(); id >= 0 {
		vj.Unk = v.Word(id)
	}
	js, err := json.Marshal(vj)
	return string(js), err
}

// ParseVocab reads the dictionary VocabMeta wrote under key in meta.
func ParseVocab(meta map[string]string, key string) (*data.Vocab, error) {
	s, ok := meta[key]
	if !ok {
		return nil, fmt.Errorf("chapter: the checkpoint's metadata has no dictionary %q", key)
	}
	var vj vocabJSON
	if err := unmarshalStrict(s, &vj); err != nil {
		return nil, fmt.Errorf("chapter: dictionary %q: %w", key, err)
	}
	v, err := data.NewVocab(vj.Words, vj.Unk)
	if err != nil {
		return nil, fmt.Errorf("chapter: dictionary %q: %w", key, err)
	}
	return v, nil
}

// SameVocab checks that the dictionary the data built (got) is the one
// the model was trained with (want), so that its ids mean the same words.
func SameVocab(what string, want, got *data.Vocab) error {
	if want == nil || got == nil {
		return fmt.Errorf("chapter: SameVocab of the %s dictionaries needs both (got %v, %v)", what, want != nil, got != nil)
	}
	w, g := want.Words(), got.Words()
	if len(w) != len(g) {
		return fmt.Errorf("the %s dictionary built from this data has %d words, the model's %d: not the data it was trained on", what, len(g), len(w))
	}
	for i := range w {
		if w[i] != g[i] {
			return fmt.Errorf("the %s dictionary built from this data has %q as word %d, the model's %q: not the data it was trained on", what, g[i], i, w[i])
		}
	}
	return nil
}

func unmarshalStrict(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

// LabelField is the field Limit stratifies by: the class of an example
// in the chapters that classify (a dense int64 [N] field).
const LabelField = "label"

// Limit is a chapter's --limit or --test-limit (flag) n: data.Limit's
// seeded random subset of n examples of ds, stratified by LabelField where
// ds has that field (every class keeps its share, so that a short run on a
// class-sorted set such as a JPEG tree still sees every class), else a
// plain random subset; a line on log says what it took. n <= 0, or at
// least ds's length, keeps ds whole and says nothing.
func Limit(ds *data.Dataset, flag string, n int, seed uint64, log io.Writer) (*data.Dataset, error) {
	if ds == nil {
		return nil, fmt.Errorf("chapter: %s %d of a nil dataset", flag, n)
	}
	sub, note, err := data.Limit(ds, n, LabelField, seed)
	if err != nil {
		return nil, fmt.Errorf("%s %d: %w", flag, n, err)
	}
	if note != "" && log != nil {
		fmt.Fprintf(log, "%s %d: %s\n", flag, n, note)
	}
	return sub, nil
}

// Lines calls f on each line of the inputs (the files, else stdin) that
// is not blank, trimmed.
func Lines(in Input, f func(line string) error) error {
	if f == nil {
		return errors.New("chapter: Lines needs a function to call")
	}
	read := func(r io.Reader, name string) error {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" {
				if err := f(line); err != nil {
					return err
				}
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		return nil
	}
	if len(in.Files) == 0 {
		if in.Stdin == nil {
			return fmt.Errorf("no input: name files or give lines on stdin")
		}
		return read(in.Stdin, "stdin")
	}
	for _, name := range in.Files {
		file, err := os.Open(name)
		if err != nil {
			return err
		}
		err = read(file, name)
		file.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// ErrNilChapter is the error of a method called on a nil Chapter.
var ErrNilChapter = errors.New("chapter: a nil Chapter (make one with its Spec.New)")

// WrongModel is the error of a Chapter method given a model that its
// chapter did not build (nil, or another chapter's).
func WrongModel(name string, m Model) error {
	return fmt.Errorf("%s: a model of type %T, not one that the %s chapter built (Train or Restore)", name, m, name)
}
