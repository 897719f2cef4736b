package chapter

import (
	"errors"
	"fmt"
	"io"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// Queries are predict's inputs as a Planned chapter parsed them: a name
// for each example, and the model's input tensors for any run of
// consecutive examples, so that a caller may run them in batches.
type Queries struct {
	Names []string
	// Inputs returns the forward pass's inputs for examples [from, to).
	Inputs func(from, to int) ([]*tensor.Tensor, error)
}

// Len returns the number of examples.
func (q *Queries) Len() int {
	if q == nil {
		return 0
	}
	return len(q.Names)
}

// Plannable is a chapter whose Predict is one forward pass over a batch
// of its parsed inputs and a report of the pass's output: Plan returns
// those parts, so that the pass can run elsewhere with the same parsing
// and printing (plumb infer --load compiles it onto an inference plan,
// package infer, and runs the inputs batch by batch).
type Plannable interface {
	Plan() (Planned, error)
}

// Planned are the parts of a Plannable chapter's Predict.
type Planned interface {
	// Queries reads in as Predict does.
	Queries(m Model, in Input) (*Queries, error)
	// Forward returns m's pass over the inputs Queries.Inputs and
	// Example return, and the indices of the inputs whose values, not
	// only their shapes, fix the pass (a ragged batch's offsets, which
	// the sequence ops take as attributes: infer.CacheOptions.Static).
	Forward(m Model) (forward func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value, static []int, err error)
	// Example returns inputs of batch examples of no particular content
	// (blank images, sequences of seqLen words), for timing the pass.
	Example(m Model, batch, seqLen int) ([]*tensor.Tensor, error)
	// Report writes the predictions of output, one row per name in
	// order, as Predict does.
	Report(out io.Writer, names []string, output *tensor.Tensor) error
}

// PredictPlanned is the Predict of a Plannable chapter: its queries of
// in, one forward pass over all of them on an inference tape, and its
// report.
func PredictPlanned(c Plannable, m Model, in Input, out io.Writer) error {
	if c == nil || m == nil || out == nil {
		return fmt.Errorf("chapter: PredictPlanned needs a chapter, a model and an output (got %v, %v, %v)", c != nil, m != nil, out != nil)
	}
	p, err := c.Plan()
	if err != nil {
		return err
	}
	q, err := p.Queries(m, in)
	if err != nil {
		return err
	}
	if q == nil || q.Inputs == nil {
		return errors.New("chapter: PredictPlanned: the chapter's Queries returned no inputs")
	}
	if q.Len() == 0 {
		return errors.New("no input: every line or file was empty")
	}
	forward, _, err := p.Forward(m)
	if err != nil {
		return err
	}
	x, err := q.Inputs(0, q.Len())
	if err != nil {
		return err
	}
	t := graph.NewEvalTape()
	defer t.Release()
	y, err := forward(t, x).Host()
	if err != nil {
		return err
	}
	return p.Report(out, q.Names, y)
}

// ImageQueries are the queries of images [N, C, H, W] named names: the
// inputs of examples [from, to) are a copy of those rows.
func ImageQueries(names []string, images *tensor.Tensor) (*Queries, error) {
	if images == nil || images.Rank() != 4 || images.Dim(0) != len(names) {
		return nil, fmt.Errorf("chapter: ImageQueries: images %v for %d names, want [%d, C, H, W]", shapeOf(images), len(names), len(names))
	}
	return &Queries{Names: names, Inputs: func(from, to int) ([]*tensor.Tensor, error) {
		if from < 0 || to > len(names) || from >= to {
			return nil, fmt.Errorf("chapter: images [%d, %d) of %d", from, to, len(names))
		}
		x, err := images.Slice(0, from, to)
		if err != nil {
			return nil, err
		}
		return []*tensor.Tensor{x}, nil
	}}, nil
}

// SeqQueries are the queries of word-id sequences seqs named names: the
// inputs of examples [from, to) are their ids concatenated (int64
// [words]) and their offsets (int64 [to-from+1]), a tensor.Ragged's two
// parts; RaggedInputs reads them back.
func SeqQueries(names []string, seqs [][]int64) (*Queries, error) {
	if len(names) != len(seqs) {
		return nil, fmt.Errorf("chapter: SeqQueries: %d names for %d sequences", len(names), len(seqs))
	}
	return &Queries{Names: names, Inputs: func(from, to int) ([]*tensor.Tensor, error) {
		if from < 0 || to > len(seqs) || from >= to {
			return nil, fmt.Errorf("chapter: sequences [%d, %d) of %d", from, to, len(seqs))
		}
		return SeqInputs(seqs[from:to])
	}}, nil
}

// SeqInputs are seqs as the two inputs SeqQueries gives: the ids
// concatenated and the offsets.
func SeqInputs(seqs [][]int64) ([]*tensor.Tensor, error) {
	off := make([]int64, 1, len(seqs)+1)
	total := 0
	for _, s := range seqs {
		total += len(s)
		off = append(off, int64(total))
	}
	ids := make([]int64, 0, total)
	for _, s := range seqs {
		ids = append(ids, s...)
	}
	v, err := tensor.FromSlice(ids, total)
	if err != nil {
		return nil, err
	}
	o, err := tensor.FromSlice(off, len(off))
	if err != nil {
		return nil, err
	}
	return []*tensor.Tensor{v, o}, nil
}

// RaggedInputs reads the two inputs SeqInputs makes back as a ragged
// batch (the ids are shared, not copied).
func RaggedInputs(in []*tensor.Tensor) (*tensor.Ragged, error) {
	if len(in) != 2 || in[0] == nil || in[1] == nil {
		return nil, fmt.Errorf("chapter: a ragged batch is two inputs, ids and offsets; got %d", len(in))
	}
	off, err := in[1].Ints()
	if err != nil {
		return nil, err
	}
	return tensor.NewRagged(in[0], off)
}

func shapeOf(t *tensor.Tensor) string {
	if t == nil {
		return "nil"
	}
	return fmt.Sprint(t.Shape())
}

// ModelAs returns m as the model type T that chapter name's Train and
// Restore build, or WrongModel's error.
func ModelAs[T Model](name string, m Model) (T, error) {
	mm, ok := m.(T)
	if !ok {
		return mm, WrongModel(name, m)
	}
	return mm, nil
}

// ImageClassifier is the Planned of a chapter that classifies
// Side×Side images of Channels channels: plumb predict's image files
// (ReadImages) in DType, the network's logits, and Classify's report of
// the Top likeliest of Classes.
type ImageClassifier struct {
	Channels, Side int
	DType          tensor.DType
	Classes        []string
	Top            int
	// Net returns m's forward pass, images to logits, or an error for a
	// model its chapter did not build.
	Net func(m Model) (func(images *graph.Value) *graph.Value, error)
}

// net is c.Net(m), or an error when c has no Net.
func (c ImageClassifier) net(m Model) (func(*graph.Value) *graph.Value, error) {
	if c.Net == nil {
		return nil, errors.New("chapter: an ImageClassifier without its Net")
	}
	return c.Net(m)
}

// Queries reads the images of in.
func (c ImageClassifier) Queries(m Model, in Input) (*Queries, error) {
	if _, err := c.net(m); err != nil {
		return nil, err
	}
	names, x, err := ReadImages(in, c.Channels, c.Side)
	if err == nil && x.DType() != c.DType {
		x, err = x.Cast(c.DType)
	}
	if err != nil {
		return nil, err
	}
	return ImageQueries(names, x)
}

// Forward is the network's logits of images [N, Channels, Side, Side].
func (c ImageClassifier) Forward(m Model) (func(*graph.Tape, []*tensor.Tensor) *graph.Value, []int, error) {
	net, err := c.net(m)
	if err != nil {
		return nil, nil, err
	}
	return func(t *graph.Tape, in []*tensor.Tensor) *graph.Value { return net(t.Const(in[0])) }, nil, nil
}

// Example is batch blank images.
func (c ImageClassifier) Example(m Model, batch, _ int) ([]*tensor.Tensor, error) {
	if _, err := c.net(m); err != nil {
		return nil, err
	}
	if batch < 1 || c.Channels < 1 || c.Side < 1 || !c.DType.IsFloat() {
		return nil, fmt.Errorf("chapter: example of %d %v images of %d×%d×%d, want at least 1 float image", batch, c.DType, c.Channels, c.Side, c.Side)
	}
	return []*tensor.Tensor{tensor.Zeros(c.DType, batch, c.Channels, c.Side, c.Side)}, nil
}

// Report prints each image's class and the probabilities of the likeliest.
func (c ImageClassifier) Report(out io.Writer, names []string, logits *tensor.Tensor) error {
	return Classify(out, names, logits, c.Classes, c.Top)
}

// NetOf is an ImageClassifier's Net for chapter name's model type T,
// whose forward pass is forward(T).
func NetOf[T Model](name string, forward func(T) func(*graph.Value) *graph.Value) func(Model) (func(*graph.Value) *graph.Value, error) {
	return func(m Model) (func(*graph.Value) *graph.Value, error) {
		mm, err := ModelAs[T](name, m)
		if err != nil {
			return nil, err
		}
		if forward == nil {
			return nil, fmt.Errorf("chapter: NetOf(%q) without a forward pass", name)
		}
		return forward(mm), nil
	}
}
