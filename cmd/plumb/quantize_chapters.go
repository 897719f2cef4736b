package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/cifar10"
	"github.com/plumbml/plumb/data/imagefolder"
	mnistdata "github.com/plumbml/plumb/data/mnist"
	"github.com/plumbml/plumb/data/mnist/embedded"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/models/chapter"
	"github.com/plumbml/plumb/models/cifar"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/tensor"
)

// quantChapter is what plumb quantize needs of a chapter whose models
// are image classifiers: its spec (to restore a checkpoint), the images'
// [C, H, W], the class count, and how to read its data.
type quantChapter struct {
	spec    chapter.Spec
	image   [3]int
	classes int
	read    func(dir, format string, log io.Writer) (trainSet, test *data.Dataset, err error)
}

// quantChapters are the chapters plumb quantize takes.
var quantChapters = []quantChapter{
	{spec: mnist.Spec, image: [3]int{1, 28, 28}, classes: 10, read: readMNIST},
	{spec: cifar.Spec, image: [3]int{3, 32, 32}, classes: cifar.Classes, read: readCIFAR},
}

// quantChapterOf returns the quantize chapter of a checkpoint's metadata.
func quantChapterOf(meta map[string]string, file string) (quantChapter, error) {
	name := meta[chapter.KeyChapter]
	var took []string
	for _, qc := range quantChapters {
		if qc.spec.Name == name {
			return qc, nil
		}
		took = append(took, qc.spec.Name)
	}
	if name == "" {
		return quantChapter{}, fmt.Errorf("quantize: %s names no chapter in its metadata (plumb quantize takes %s checkpoints)", file, strings.Join(took, " and "))
	}
	return quantChapter{}, fmt.Errorf("quantize: %s holds a %s model: plumb quantize takes %s checkpoints", file, name, strings.Join(took, " and "))
}

// modelName is the model a checkpoint's configuration names ("cnn",
// "resnet32"), or "model".
func modelName(meta map[string]string) string {
	var c struct {
		Model string `json:"model"`
	}
	if json.Unmarshal([]byte(meta[chapter.KeyConfig]), &c) != nil || c.Model == "" {
		return "model"
	}
	return c.Model
}

// load reads the chapter's training and test images from dir and checks
// that they are float32 of the chapter's shape.
func (qc quantChapter) load(dir, format string, log io.Writer) (trainSet, test *data.Dataset, err error) {
	if trainSet, test, err = qc.read(dir, format, log); err != nil {
		return nil, nil, fmt.Errorf("quantize: %w", err)
	}
	for _, ds := range []*data.Dataset{trainSet, test} {
		img := ds.Tensor("image")
		if dt, s := img.DType(), img.Shape(); dt != tensor.Float32 || len(s) != 4 || !slices.Equal(s[1:], qc.image[:]) {
			return nil, nil, fmt.Errorf("quantize: %s images are %v%v, want float32 [N %d %d %d]", qc.spec.Name, dt, s, qc.image[0], qc.image[1], qc.image[2])
		}
	}
	return trainSet, test, nil
}

// readMNIST reads MNIST from dir, or the embedded copy.
func readMNIST(dir, format string, _ io.Writer) (trainSet, test *data.Dataset, err error) {
	if format != "bin" {
		return nil, nil, fmt.Errorf("--format %q: MNIST has one format", format)
	}
	if dir == "" {
		return embedded.Load()
	}
	var looked []string
	if dir, looked, err = chapterDir(mnist.Spec, dir); err != nil {
		return nil, nil, lookedIn(err, looked)
	}
	return mnistdata.Load(dir)
}

// readCIFAR reads CIFAR-10 from dir (the dataset root, cifar10/, or the
// format's own folder): the binary batches of the lossless subset, or
// the JPEG tree (train and test), as plumb train cifar10 reads them.
func readCIFAR(dir, format string, log io.Writer) (trainSet, test *data.Dataset, err error) {
	if dir == "" && data.Dir("") == "" {
		return nil, nil, fmt.Errorf("cifar10: no data: pass --data DIR (the dataset root holding cifar10, or that folder itself) or set %s", data.EnvDir)
	}
	var looked []string
	if dir, looked, err = chapterDir(cifar.Spec, dir); err != nil {
		return nil, nil, lookedIn(err, looked)
	}
	switch format {
	case "bin":
		if sub := filepath.Join(dir, "lossless-subset"); isDir(sub) {
			dir = sub
		}
		return cifar10.Load(dir)
	case "jpeg":
		src := dir
		if m, _ := filepath.Glob(filepath.Join(dir, "jpeg-substitute", "*.tar.gz")); len(m) == 1 {
			src = m[0]
		} else if m, _ := filepath.Glob(filepath.Join(dir, "*.tar.gz")); len(m) == 1 {
			src = m[0]
		}
		const root = "cifar10-jpeg"
		if trainSet, _, err = imagefolder.LoadProgress(src, root+"/train", data.Limits{}, data.NewProgress(log, src+" (train)", "images", 0)); err != nil {
			return nil, nil, err
		}
		test, _, err = imagefolder.LoadProgress(src, root+"/test", data.Limits{}, data.NewProgress(log, src+" (test)", "images", 0))
		return trainSet, test, err
	}
	return nil, nil, fmt.Errorf("cifar10: --format %q: want bin or jpeg", format)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// trace traces the restored model m at batch quantBatch and names its
// parameter tensors, for Quantize's and LoadQuantized's layer names.
func (qc quantChapter) trace(m chapter.Model) (*infer.Graph, map[*tensor.Tensor]string, error) {
	net, ok := m.(layers.Layer)
	if !ok {
		return nil, nil, fmt.Errorf("quantize: the model %T is not a layer", m)
	}
	g, err := infer.TraceLayer(net, tensor.Zeros(tensor.Float32, quantBatch, qc.image[0], qc.image[1], qc.image[2]))
	if err != nil {
		return nil, nil, fmt.Errorf("quantize: %w", err)
	}
	names := map[*tensor.Tensor]string{}
	for _, p := range m.Params() {
		names[p.Value] = p.Name
	}
	return g, names, nil
}

// batches splits images [N, C, H, W] into batches of quantBatch (the
// last padded with zeros), each a plan's input list.
func (qc quantChapter) batches(img *tensor.Tensor) [][]*tensor.Tensor {
	n, per := img.Dim(0), img.Size()/max(img.Dim(0), 1)
	src := img.Float32s()
	var out [][]*tensor.Tensor
	for i := 0; i < n; i += quantBatch {
		b := tensor.Zeros(tensor.Float32, quantBatch, qc.image[0], qc.image[1], qc.image[2])
		copy(b.Float32s(), src[i*per:min(n, i+quantBatch)*per])
		out = append(out, []*tensor.Tensor{b})
	}
	return out
}

// accuracy compiles g and runs it over the test set in batches,
// returning the share of images whose largest logit is the label.
func (qc quantChapter) accuracy(g *infer.Graph, test *data.Dataset) (float64, error) {
	p, err := g.Compile(infer.Options{})
	if err != nil {
		return 0, err
	}
	labels := test.Tensor("label")
	k := qc.classes
	out := tensor.Zeros(tensor.Float32, quantBatch, k)
	right := 0
	for bi, b := range qc.batches(test.Tensor("image")) {
		if err := p.Run(out, b...); err != nil {
			return 0, err
		}
		logits := out.Float32s()
		for r := range min(quantBatch, test.Len()-bi*quantBatch) {
			row := logits[r*k : r*k+k]
			best := 0
			for j, v := range row {
				if v > row[best] {
					best = j
				}
			}
			if int(labels.At(bi*quantBatch+r)) == best {
				right++
			}
		}
	}
	return float64(right) / float64(test.Len()), nil
}
