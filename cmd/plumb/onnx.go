package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/models/recommender"
	"github.com/plumbml/plumb/models/word2vec"
	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/onnx/export"
	onnxrun "github.com/plumbml/plumb/onnx/run"
	"github.com/plumbml/plumb/tensor"
)

// onnxUsage documents plumb onnx.
const onnxUsage = `usage:
  plumb onnx inspect FILE   an ONNX model's inputs, outputs, opset, op counts, unsupported ops
                            and the path it runs on at batch 1 (plan or interpreter)
  plumb onnx explain [--batch N] [--dim NAME=SIZE ...] FILE
                            the plan compiled for that signature, before and after its
                            passes (or why the model runs on the interpreter)
  plumb onnx export --load CKPT -o FILE [--seq-len N]
  plumb onnx export -o FILE [--seq-len N] MODEL
      writes a model as ONNX (opset 17, batch dimension symbolic): the
      model a checkpoint of plumb train mnist, cifar10, sentiment,
      word2vec or recommender holds, or MODEL of plumb infer (freshly
      initialised weights): mnist-mlp, mnist-cnn, resnet32, text-cnn,
      text-lstm, translate-encoder. A text model takes words [batch, seq]
      int64 (padded) and words_lengths [batch] int64; an image model
      images [batch, C, H, W]; word2vec context [batch, 4]; the
      recommender user, gender, age, job, movie [batch] and genres and
      title padded with their _lengths. --seq-len is the traced
      sentences' length; the file takes any.
`

// onnxCommand runs `plumb onnx inspect FILE`: the model's opset, inputs and
// outputs (element types and dims, symbolic ones by name), its op counts,
// the op types the importer does not run, whether the graph compiles
// (the first error if not: node, op type, opset and what was expected) and
// which path Run takes at batch 1; and `plumb onnx explain FILE`: the plan
// for one signature.
func onnxCommand(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprint(stdout, onnxUsage)
		if len(args) == 0 {
			return errors.New("plumb onnx: expected a subcommand (inspect, explain or export)")
		}
		return flag.ErrHelp
	}
	switch args[0] {
	case "inspect":
		return onnxInspect(args[1:], stdout, stderr)
	case "explain":
		return onnxExplain(args[1:], stdout, stderr)
	case "export":
		return onnxExport(args[1:], stdout, stderr)
	}
	return fmt.Errorf("plumb onnx: unknown subcommand %q; expected inspect, explain or export\n%s", args[0], onnxUsage)
}

func onnxInspect(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("onnx inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("plumb onnx inspect: expected one model file, got %d arguments\n%s", fs.NArg(), onnxUsage)
	}
	m, err := onnx.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	s := onnxrun.Inspect(m)
	fmt.Fprintf(stdout, "model: %s (producer %q %s, IR version %d)\n", fs.Arg(0), m.ProducerName, m.ProducerVersion, m.IRVersion)
	fmt.Fprint(stdout, s.String())
	if len(s.Unsupported) == 0 {
		fmt.Fprintln(stdout, "unsupported: none")
	}
	c, err := onnxrun.Compile(m)
	if err != nil {
		fmt.Fprintf(stdout, "compile: %v\n", err)
		return nil
	}
	fmt.Fprintf(stdout, "compile: ok, %d of %d nodes run at run time (the others fold into constants or feed only folded values)\n", c.Steps(), len(m.Graph.Nodes))
	dims, err := signature(m, c.InputNames(), 1, nil)
	if err != nil {
		fmt.Fprintf(stdout, "runs on: unknown (%v)\n", err)
		return nil
	}
	path, why, err := c.PathFor(dims)
	switch {
	case err != nil:
		fmt.Fprintf(stdout, "runs on: unknown (%v)\n", err)
	case why != "":
		fmt.Fprintf(stdout, "runs on: %v at %v (%s)\n", path, dims, why)
	default:
		fmt.Fprintf(stdout, "runs on: %v at %v (see plumb onnx explain)\n", path, dims)
	}
	return nil
}

// onnxExport runs plumb onnx export: it builds the forward pass of the
// checkpoint's model (or of a plumb infer MODEL) on an example batch of 2
// and writes it with onnx/export.
func onnxExport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("onnx export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, onnxUsage) }
	load := fs.String("load", "", "a checkpoint of plumb train mnist, cifar10, sentiment, word2vec or recommender")
	out := fs.String("o", "", "the ONNX file to write")
	seqLen := fs.Int("seq-len", 20, "words of each traced sentence (text models)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case *out == "":
		return errors.New("plumb onnx export: -o FILE is required")
	case *seqLen < 1:
		return fmt.Errorf("plumb onnx export: --seq-len %d must be positive", *seqLen)
	case *load == "" && fs.NArg() != 1:
		return fmt.Errorf("plumb onnx export: want --load CKPT or one MODEL (%s), got %d arguments", strings.Join(inferModelNames(), ", "), fs.NArg())
	case *load != "" && fs.NArg() != 0:
		return fmt.Errorf("plumb onnx export: --load and MODEL %q both given; expected one", fs.Arg(0))
	}
	var (
		ex  exportable
		err error
	)
	if *load != "" {
		ex, err = checkpointExportable(*load, *seqLen)
	} else {
		ex, err = inferExportable(fs.Arg(0), *seqLen)
	}
	if err != nil {
		return err
	}
	if err := export.Save(*out, ex.forward, ex.example, ex.opts); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %s, ONNX opset %d\n", *out, ex.what, export.Opset)
	return nil
}

// exportable is a forward pass ready for export.Save.
type exportable struct {
	what    string // for the message
	forward infer.Forward
	example []*tensor.Tensor
	opts    export.Options
}

// exportBatch is the example batch size exports are traced at: more than
// one, so that nothing ties the batch to 1.
const exportBatch = 2

// imageExportable exports an image classifier of inputs [C, H, W].
func imageExportable(what string, forward infer.Forward, shape ...int) exportable {
	return exportable{what: what, forward: forward,
		example: []*tensor.Tensor{tensor.Zeros(tensor.Float32, append([]int{exportBatch}, shape...)...)},
		opts:    export.Options{Inputs: []export.Input{{Name: "images"}}, Output: "logits"}}
}

// textExportable exports a model of a ragged batch of word ids.
func textExportable(what string, forward infer.Forward, seqLen int) exportable {
	ids, off := inferWords(exportBatch, seqLen)
	return exportable{what: what, forward: forward, example: []*tensor.Tensor{ids},
		opts: export.Options{Inputs: []export.Input{{Name: "words", Offsets: off}}, Output: "logits"}}
}

// checkpointExportable rebuilds the model a checkpoint holds, as plumb
// eval does, and loads its parameters.
func checkpointExportable(path string, seqLen int) (exportable, error) {
	meta, err := checkpoint.Meta(path)
	if err != nil {
		return exportable{}, err
	}
	name := meta[chapter.KeyChapter]
	spec, err := findChapter(name)
	if err != nil {
		return exportable{}, fmt.Errorf("%s: %w", path, err)
	}
	c := spec.New()
	cfs := flag.NewFlagSet("", flag.ContinueOnError)
	c.Flags(cfs)
	if fl := cfs.Lookup("model"); fl != nil {
		fl.Value.Set("") // the model the checkpoint holds, as plumb eval's restore does
	}
	m, err := c.Restore(meta)
	if err != nil {
		return exportable{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := checkpoint.Load(path, m.Params(), nil); err != nil {
		return exportable{}, err
	}
	what := fmt.Sprintf("the %s model of %s", name, path)
	switch f := m.(type) {
	case interface {
		Logits(*graph.Tape, *tensor.Ragged) *graph.Value
	}:
		_, off := inferWords(exportBatch, seqLen)
		return textExportable(what, func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
			return f.Logits(tape, &tensor.Ragged{Values: in[0], Offsets: off})
		}, seqLen), nil
	case interface {
		Logits(*graph.Tape, *tensor.Tensor) *graph.Value
	}: // word2vec: the N-1 context words
		ctx := tensor.Zeros(tensor.Int64, exportBatch, word2vec.N-1)
		return exportable{what: what, example: []*tensor.Tensor{ctx},
			forward: func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value { return f.Logits(tape, in[0]) },
			opts:    export.Options{Inputs: []export.Input{{Name: "context"}}, Output: "logits"}}, nil
	case interface {
		Predict(*graph.Tape, recommender.Inputs) *graph.Value
	}: // the recommender: five ids, and the genres and title words of each movie
		ids := func() *tensor.Tensor { return tensor.Zeros(tensor.Int64, exportBatch) }
		user, gender, age, job, movie := ids(), ids(), ids(), ids(), ids()
		genres, goff := inferWords(exportBatch, 1)
		title, toff := inferWords(exportBatch, seqLen)
		return exportable{what: what, example: []*tensor.Tensor{user, gender, age, job, movie, genres, title},
			forward: func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
				return f.Predict(tape, recommender.Inputs{User: in[0], Gender: in[1], Age: in[2], Job: in[3], Movie: in[4],
					Genres: &tensor.Ragged{Values: in[5], Offsets: goff}, Title: &tensor.Ragged{Values: in[6], Offsets: toff}})
			},
			opts: export.Options{Output: "score", Inputs: []export.Input{{Name: "user"}, {Name: "gender"}, {Name: "age"}, {Name: "job"},
				{Name: "movie"}, {Name: "genres", Offsets: goff}, {Name: "title", Offsets: toff}}}}, nil
	case interface {
		Forward(*graph.Value) *graph.Value
	}:
		switch name {
		case "mnist":
			return imageExportable(what, imageForward(f.Forward), 1, 28, 28), nil
		case "cifar10":
			return imageExportable(what, imageForward(f.Forward), 3, 32, 32), nil
		}
	}
	return exportable{}, fmt.Errorf("plumb onnx export: %s holds a %s model, which has no ONNX export; expected mnist, cifar10, sentiment, word2vec or recommender", path, name)
}

// inferExportable is plumb infer's MODEL with fresh weights.
func inferExportable(name string, seqLen int) (exportable, error) {
	build, ok := inferModels[name]
	if !ok {
		return exportable{}, fmt.Errorf("plumb onnx export: unknown model %q (want %s)", name, strings.Join(inferModelNames(), ", "))
	}
	forward, in, err := build(exportBatch, seqLen)
	if err != nil {
		return exportable{}, err
	}
	what := name + " (fresh weights)"
	if in[0].DType() == tensor.Int64 { // the text models: ids of inferWords' sentences
		ex := textExportable(what, forward, seqLen)
		ex.example = in
		return ex, nil
	}
	return imageExportable(what, forward, []int(in[0].Shape()[1:])...), nil
}

// inferModelNames are the names of inferModels, sorted.
func inferModelNames() []string { return slices.Sorted(maps.Keys(inferModels)) }

// dimFlags collects --dim NAME=SIZE.
type dimFlags map[string]int

func (d dimFlags) String() string { return fmt.Sprint(map[string]int(d)) }

func (d dimFlags) Set(v string) error {
	name, size, ok := strings.Cut(v, "=")
	n, err := strconv.Atoi(size)
	if !ok || name == "" || err != nil || n < 1 {
		return fmt.Errorf("%q: expected NAME=SIZE with a positive size", v)
	}
	d[name] = n
	return nil
}

// onnxExplain runs `plumb onnx explain`: the signature's path, and the
// plan before and after its passes (run.Model.Explain).
func onnxExplain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("onnx explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	batch := fs.Int("batch", 1, "the size of every symbolic dimension --dim does not name")
	dims := dimFlags{}
	fs.Var(dims, "dim", "NAME=SIZE for the symbolic dimension NAME (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *batch < 1 {
		return fmt.Errorf("plumb onnx explain: expected one model file and a positive --batch\n%s", onnxUsage)
	}
	m, err := onnx.Load(fs.Arg(0))
	if err != nil {
		return err
	}
	c, err := onnxrun.Compile(m)
	if err != nil {
		return err
	}
	sig, err := signature(m, c.InputNames(), *batch, dims)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "model: %s, inputs %v\n", fs.Arg(0), sig)
	return c.Explain(stdout, sig)
}

// signature gives each graph input named in names its declared dims, a
// symbolic one the size sym gives its name, else def.
func signature(m *onnx.Model, names []string, def int, sym map[string]int) (map[string][]int, error) {
	out := map[string][]int{}
	for _, v := range m.Graph.Inputs {
		if !slices.Contains(names, v.Name) {
			continue
		}
		if v.Shape == nil {
			return nil, fmt.Errorf("graph input %q has no declared shape; expected dims to explain", v.Name)
		}
		d := make([]int, len(v.Shape))
		for i, s := range v.Shape {
			switch {
			case s.Size > 0:
				d[i] = int(s.Size)
			case sym[s.Param] > 0:
				d[i] = sym[s.Param]
			default:
				d[i] = def
			}
		}
		out[v.Name] = d
	}
	return out, nil
}
