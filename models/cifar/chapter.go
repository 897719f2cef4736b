package cifar

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/cifar10"
	"github.com/plumbml/plumb/data/imagefolder"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// Spec is the CIFAR-10 chapter, a row of the command line's table.
var Spec = chapter.Spec{
	Name: "cifar10", Title: "CIFAR-10 images: the book's ResNet and VGG", Models: []string{"resnet32", "vgg"},
	Folders: []string{"cifar10"}, Unit: "images", Epochs: 1, Batch: 128, LR: 1e-3,
	Inputs: "32×32 PNG, JPEG or IDX images → the class and its probabilities",
	New:    func() chapter.Chapter { return &Chapter{Config: ModelConfig{Model: "resnet32"}, Format: "bin"} },
}

// ModelConfig is what a checkpoint records to rebuild the network; depth
// and width 0 are the book's.
type ModelConfig struct {
	Model   string   `json:"model"`
	Depth   int      `json:"depth,omitempty"`
	Width   int      `json:"width,omitempty"`
	Classes []string `json:"classes"`
}

// Chapter trains, evaluates and queries the CIFAR-10 networks.
type Chapter struct {
	Config  ModelConfig
	Format  string // bin: the binary batches; jpeg: the JPEG tree
	Augment bool
	pcg     *rand.PCG
}

type model struct {
	*Net
	loss train.LossFunc[*data.Batch]
}

func (m model) Loss(t *graph.Tape, b *data.Batch) (*graph.Value, int) { return m.loss(t, b) }

// Flags declares --model, --depth, --width, --format and --augment.
func (c *Chapter) Flags(fs *flag.FlagSet) {
	if c == nil || fs == nil {
		return
	}
	fs.StringVar(&c.Config.Model, "model", c.Config.Model, "network: resnet32 or vgg (the book's)")
	fs.IntVar(&c.Config.Depth, "depth", 0, "layers: resnet 6n+2 (20, 32, 44, 56, 110), vgg 11, 13, 16 or 19 (0: the book's)")
	fs.IntVar(&c.Config.Width, "width", 0, "channels of the first stage: resnet 16, vgg 64 in the book (0: the book's)")
	fs.StringVar(&c.Format, "format", c.Format, "bin: the binary batches (cifar10/lossless-subset); jpeg: the JPEG tree (cifar10/jpeg-substitute)")
	fs.BoolVar(&c.Augment, "augment", false, "pad 4, random 32x32 crop and horizontal flip of each training image (off in the book's recipe)")
}

func (c *Chapter) build(rng *rand.Rand) (*Net, error) {
	s, d, w := Sizes{Classes: Classes}, c.Config.Depth, c.Config.Width
	switch {
	case d == 0 && w == 0:
		return New(c.Config.Model, rng)
	case c.Config.Model == "resnet32":
		s.Depth, s.Width = orDefault(d, 32), orDefault(w, 16)
		return NewResNet(s, rng)
	case c.Config.Model == "vgg":
		s.Depth, s.Width = orDefault(d, 16), orDefault(w, 64)
		return NewVGG(s, rng)
	}
	return New(c.Config.Model, rng) // the unknown-model error
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// load reads CIFAR-10 from dir (the cifar10 folder or the dataset root) in
// c.Format, and the class names, showing on log the reading of a JPEG
// tree that takes more than a second (data.NewProgress).
func (c *Chapter) load(dir string, log io.Writer) (trainSet, testSet *data.Dataset, classes []string, err error) {
	switch c.Format {
	case "bin":
		for _, sub := range []string{"lossless-subset", "cifar10/lossless-subset"} {
			if isDir(filepath.Join(dir, sub)) {
				dir = filepath.Join(dir, sub)
				break
			}
		}
		trainSet, testSet, err = cifar10.Load(dir)
		return trainSet, testSet, cifar10.Classes, err
	case "jpeg":
		src := dir
		if isDir(dir) && !isDir(filepath.Join(dir, jpegRoot)) {
			src = ""
			for _, d := range []string{filepath.Join(dir, "jpeg-substitute"), filepath.Join(dir, "cifar10", "jpeg-substitute"), dir} {
				if m, _ := filepath.Glob(filepath.Join(d, "*.tar.gz")); len(m) == 1 && src == "" {
					src = m[0]
				}
			}
			if src == "" {
				return nil, nil, nil, fmt.Errorf("cifar10: no JPEG tree in %s: want %s/, one .tar.gz, or jpeg-substitute/ with one .tar.gz", dir, jpegRoot)
			}
		}
		if trainSet, classes, err = imagefolder.LoadProgress(src, jpegRoot+"/train", data.Limits{}, data.NewProgress(log, src+" (train)", "images", 0)); err != nil {
			return nil, nil, nil, err
		}
		testSet, _, err = imagefolder.LoadProgress(src, jpegRoot+"/test", data.Limits{}, data.NewProgress(log, src+" (test)", "images", 0))
		return trainSet, testSet, classes, err
	}
	return nil, nil, nil, fmt.Errorf("cifar10: --format %q: want bin or jpeg", c.Format)
}

// jpegRoot is the JPEG tree's folder inside its archive (or an extracted copy).
const jpegRoot = "cifar10-jpeg"

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// Train builds a fresh network, its input normalisation from the training
// images, and loads the data.
func (c *Chapter) Train(dir string, o chapter.Options, log io.Writer) (*chapter.Setup, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	c.pcg = rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15) // tensor.NewRNG's stream, kept for the trainer
	net, err := c.build(rand.New(c.pcg))
	if err != nil {
		return nil, err
	}
	trainSet, testSet, classes, err := c.load(dir, log)
	if err == nil {
		trainSet, err = chapter.Limit(trainSet, "--limit", o.Limit, o.Seed, log)
	}
	if err == nil {
		testSet, err = chapter.Limit(testSet, "--test-limit", o.TestLimit, o.Seed, log)
	}
	if err != nil {
		return nil, err
	}
	c.Config.Classes = classes
	nm, err := ChannelNorm(trainSet.Tensor("image"))
	if err == nil {
		err = net.SetNorm(nm)
	}
	loader, lerr := data.NewLoader(trainSet, o.Batch, data.Shuffle(o.Seed))
	if err = joinFirst(err, lerr); err != nil {
		return nil, err
	}
	return &chapter.Setup{
		Model: model{net, Loss(net, c.Augment, rand.New(c.pcg))}, RNG: c.pcg, Train: loader, HostFields: HostFields(c.Augment),
		Evaluate: evaluator(net, testSet, o.Batch), Monitor: "accuracy", Maximize: true,
		Optimizer: func() (optim.Optimizer, *train.LR, error) {
			opt, err := optim.NewAdam(net.Params(), optim.LR(o.LR))
			return opt, nil, err
		},
		Describe: fmt.Sprintf("training %s on %d CIFAR-10 images (%s), testing on %d (Adam lr %g, batch %d, seed %d, augmentation %v); channel means %.4f, deviations %.4f",
			c.Config.Model, trainSet.Len(), c.Format, testSet.Len(), o.LR, o.Batch, o.Seed, c.Augment, nm.Mean, nm.Std),
		RunName: runName(c.Config.Model, c.Format, c.Config.Depth, c.Config.Width, o.Limit, o.TestLimit, o.Epochs, o.Batch, c.Augment),
		Record: map[string]any{"model": c.Config.Model, "depth": c.Config.Depth, "width": c.Config.Width, "format": c.Format,
			"batch": o.Batch, "lr": o.LR, "seed": o.Seed, "augment": c.Augment, "train_size": trainSet.Len(),
			"test_size": testSet.Len(), "optimizer": "adam"},
	}, nil
}

// runName names a run's recipe in its log, and so its KPIs:
// cifar10-<model>, then whatever differs from the book's recipe (the
// binary batches, the book's depth and width, all images, 1 epoch, batch
// 128, the whole test set, no augmentation), such as cifar10-resnet32-jpeg
// or cifar10-vgg-limit4000-epochs3. bench/cifar_data.py names runs the
// same way.
func runName(model, format string, depth, width, limit, testLimit, epochs, batch int, augment bool) string {
	name := "cifar10-" + model
	if format != "bin" {
		name += "-" + format
	}
	for _, p := range []struct {
		key    string
		v, def int
	}{{"depth", depth, 0}, {"width", width, 0}, {"limit", limit, 0}, {"testlimit", testLimit, 0}, {"epochs", epochs, 1}, {"batch", batch, 128}} {
		if p.v != p.def {
			name += fmt.Sprintf("-%s%d", p.key, p.v)
		}
	}
	if augment {
		name += "-augment"
	}
	return name
}

func joinFirst(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

func evaluator(net *Net, ds *data.Dataset, batch int) train.Evaluator {
	return func(report func(done, total int)) (train.Metrics, error) {
		acc, loss, err := evaluate(net, ds, batch, report)
		return train.Metrics{"accuracy": acc, "loss": loss}, err
	}
}

// Restore rebuilds the network a checkpoint names (its normalisation is
// among its parameters).
func (c *Chapter) Restore(meta map[string]string) (chapter.Model, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	asked := c.Config.Model
	if err := chapter.DecodeMeta(meta, Spec.Name, &c.Config); err != nil {
		return nil, err
	}
	if asked != "" && asked != c.Config.Model {
		return nil, fmt.Errorf("the checkpoint holds the CIFAR-10 %s, not the %s (drop --model)", c.Config.Model, asked)
	}
	if len(c.Config.Classes) != Classes {
		return nil, fmt.Errorf("cifar10: the checkpoint names %d classes, want %d", len(c.Config.Classes), Classes)
	}
	net, err := c.build(tensor.NewRNG(0))
	if err != nil {
		return nil, err
	}
	return model{net, Loss(net, false, nil)}, nil
}

// Evaluate measures m on the test images.
func (c *Chapter) Evaluate(m chapter.Model, dir string, o chapter.Options, log io.Writer) (train.Evaluator, string, error) {
	mm, ok := m.(model)
	if c == nil || !ok {
		return nil, "", errors.Join(chapter.ErrNilChapter, chapter.WrongModel(Spec.Name, m))
	}
	_, testSet, _, err := c.load(dir, log)
	if err == nil {
		testSet, err = chapter.Limit(testSet, "--test-limit", o.TestLimit, o.Seed, log)
	}
	if err != nil {
		return nil, "", err
	}
	return evaluator(mm.Net, testSet, o.Batch), fmt.Sprintf("%d test images (%s, %s)", testSet.Len(), c.Config.Model, c.Format), nil
}

// Predict prints each image's class and the probabilities of the likeliest
// three (chapter.PredictPlanned).
func (c *Chapter) Predict(m chapter.Model, in chapter.Input, out io.Writer) error {
	return chapter.PredictPlanned(c, m, in, out)
}

// Plan is predict's parts: 32×32 RGB images, their logits (the input
// normalisation included), and the likeliest three classes.
func (c *Chapter) Plan() (chapter.Planned, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	return chapter.ImageClassifier{Channels: 3, Side: 32, DType: tensor.Float32, Top: 3, Classes: c.Config.Classes,
		Net: chapter.NetOf(Spec.Name, func(m model) func(*graph.Value) *graph.Value { return m.Forward })}, nil
}

// Meta records the network's name, sizes and class names.
func (c *Chapter) Meta() (map[string]string, error) {
	if c == nil {
		return nil, chapter.ErrNilChapter
	}
	return chapter.EncodeMeta(Spec.Name, c.Config, nil)
}
