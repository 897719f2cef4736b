package mnist

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/plumbml/plumb/data"
	mnistdata "github.com/plumbml/plumb/data/mnist"
	"github.com/plumbml/plumb/data/mnist/embedded"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// Spec is the MNIST chapter, a row of the command line's table.
var Spec = chapter.Spec{
	Name: "mnist", Title: "handwritten digits: the book's MLP and CNN", Models: []string{"cnn", "mlp"},
	Folders: []string{"mnist"}, Unit: "images", NoData: true, Epochs: 1, Batch: 64, LR: 1e-3,
	Inputs: "28×28 PNG, JPEG or IDX digits → the digit and its probabilities",
	New:    func() chapter.Chapter { return &Chapter{Config: ModelConfig{Model: "cnn", DType: "float32"}} },
}

// ModelConfig is what a checkpoint records to rebuild the network.
type ModelConfig struct {
	Model string `json:"model"` // cnn or mlp
	DType string `json:"dtype"` // float32 or float64
}

// Chapter trains, evaluates and queries the MNIST networks (chapter.Chapter).
type Chapter struct{ Config ModelConfig }

// net is a network with its loss, as the driver takes it.
type net struct{ Model }

func (n net) Loss(t *graph.Tape, b *data.Batch) (*graph.Value, int) { return Loss(n.Model)(t, b) }

// Flags declares --model and --dtype.
func (c *Chapter) Flags(fs *flag.FlagSet) {
	if c == nil || fs == nil {
		return
	}
	fs.StringVar(&c.Config.Model, "model", c.Config.Model, "network: cnn or mlp")
	fs.StringVar(&c.Config.DType, "dtype", c.Config.DType, "float32, or float64 (slower, but round-off no longer steers the run)")
}

func (c *Chapter) dtype() (tensor.DType, error) {
	dt, ok := map[string]tensor.DType{"float32": tensor.Float32, "float64": tensor.Float64}[c.Config.DType]
	if !ok {
		return 0, fmt.Errorf("mnist: --dtype %q, want float32 or float64", c.Config.DType)
	}
	return dt, nil
}

func (c *Chapter) build(seed uint64) (Model, tensor.DType, error) {
	dt, err := c.dtype()
	if err != nil {
		return nil, 0, err
	}
	m, err := New(c.Config.Model, tensor.NewRNG(seed), layers.DType(dt))
	return m, dt, err
}

// load reads MNIST from dir, or the embedded copy when dir is "", as dt.
func load(dir string, dt tensor.DType) (trainSet, test *data.Dataset, err error) {
	if dir == "" {
		trainSet, test, err = embedded.Load()
	} else {
		trainSet, test, err = mnistdata.Load(dir)
	}
	if err != nil {
		return nil, nil, err
	}
	if trainSet, err = imagesAs(trainSet, dt); err != nil {
		return nil, nil, err
	}
	test, err = imagesAs(test, dt)
	return trainSet, test, err
}

// imagesAs returns ds with its "image" field converted to dt.
func imagesAs(ds *data.Dataset, dt tensor.DType) (*data.Dataset, error) {
	img := ds.Tensor("image")
	if img.DType() == dt {
		return ds, nil
	}
	img, err := img.Cast(dt)
	if err != nil {
		return nil, err
	}
	return data.NewDataset(data.DenseField("image", img), data.DenseField("label", ds.Tensor("label")))
}

// Train builds a fresh network and loads MNIST (dir "": the embedded copy).
func (c *Chapter) Train(dir string, o chapter.Options, log io.Writer) (*chapter.Setup, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	m, dt, err := c.build(o.Seed)
	if err != nil {
		return nil, err
	}
	trainSet, test, err := load(dir, dt)
	if err != nil {
		return nil, err
	}
	if trainSet, err = chapter.Limit(trainSet, "--limit", o.Limit, o.Seed, log); err != nil {
		return nil, err
	}
	if test, err = chapter.Limit(test, "--test-limit", o.TestLimit, o.Seed, log); err != nil {
		return nil, err
	}
	loader, err := data.NewLoader(trainSet, o.Batch, data.Shuffle(o.Seed))
	if err != nil {
		return nil, err
	}
	return &chapter.Setup{
		Model: net{m}, Train: loader, Evaluate: Evaluator(m, test, evalBatch), Monitor: "accuracy", Maximize: true,
		Optimizer: func() (optim.Optimizer, *train.LR, error) {
			opt, err := optim.NewAdam(m.Params(), optim.LR(o.LR))
			return opt, nil, err
		},
		Probe: func(n int) train.Evaluator { return Evaluator(m, test.Take(min(n, test.Len())), evalBatch) },
		Describe: fmt.Sprintf("training %s on %d images, testing on %d (Adam lr %g, batch %d, seed %d)",
			c.Config.Model, trainSet.Len(), test.Len(), o.LR, o.Batch, o.Seed),
		Record: map[string]any{"model": c.Config.Model, "batch": o.Batch, "lr": o.LR, "seed": o.Seed, "dtype": c.Config.DType,
			"train_size": trainSet.Len(), "test_size": test.Len(), "optimizer": "adam"},
	}, nil
}

// Restore rebuilds the network a checkpoint names; a --model other than
// the one it holds is an error that names the one it holds.
func (c *Chapter) Restore(meta map[string]string) (chapter.Model, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	asked := c.Config.Model
	if err := chapter.DecodeMeta(meta, Spec.Name, &c.Config); err != nil {
		return nil, err
	}
	if asked != "" && asked != c.Config.Model {
		return nil, fmt.Errorf("the checkpoint holds the MNIST %s, not the %s (drop --model, or pass --model %s)", c.Config.Model, asked, c.Config.Model)
	}
	m, _, err := c.build(0)
	return net{m}, err
}

// Evaluate measures m on the test images.
func (c *Chapter) Evaluate(m chapter.Model, dir string, o chapter.Options, log io.Writer) (train.Evaluator, string, error) {
	mm, ok := m.(net)
	if c == nil || !ok {
		return nil, "", errors.Join(chapter.ErrNilChapter, chapter.WrongModel(Spec.Name, m))
	}
	dt, err := c.dtype()
	if err != nil {
		return nil, "", err
	}
	_, test, err := load(dir, dt)
	if err == nil {
		test, err = chapter.Limit(test, "--test-limit", o.TestLimit, o.Seed, log)
	}
	if err != nil {
		return nil, "", err
	}
	return Evaluator(mm.Model, test, evalBatch), fmt.Sprintf("%d test images (%s)", test.Len(), c.Config.Model), nil
}

// Predict prints each image's digit and the probabilities of the likeliest
// three (chapter.PredictPlanned).
func (c *Chapter) Predict(m chapter.Model, in chapter.Input, out io.Writer) error {
	return chapter.PredictPlanned(c, m, in, out)
}

// Plan is predict's parts: 28×28 gray images in the network's dtype,
// their logits, and the likeliest three digits.
func (c *Chapter) Plan() (chapter.Planned, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	dt, err := c.dtype()
	if err != nil {
		return nil, err
	}
	return chapter.ImageClassifier{Channels: 1, Side: 28, DType: dt, Top: 3,
		Classes: []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"},
		Net:     chapter.NetOf(Spec.Name, func(m net) func(*graph.Value) *graph.Value { return m.Forward })}, nil
}

// Meta records the network's name and dtype.
func (c *Chapter) Meta() (map[string]string, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	return chapter.EncodeMeta(Spec.Name, c.Config, nil)
}
