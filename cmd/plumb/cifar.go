package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/cifar10"
	"github.com/plumbml/plumb/data/imagefolder"
	"github.com/plumbml/plumb/dist"
	"github.com/plumbml/plumb/models/cifar"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/tensor"
	"github.com/plumbml/plumb/train"
)

// The JPEG tree's folders inside its archive (or an extracted copy).
const cifarJPEGRoot = "cifar10-jpeg"

// cifarData loads CIFAR-10 from dir (or $PLUMB_DATA) in the given format:
// "bin", the binary batches (dir itself, or dir/cifar10/lossless-subset
// when dir is a data root), or "jpeg", the JPEG tree (a .tar.gz, a folder
// holding cifar10-jpeg/ or one .tar.gz, or a data root with
// cifar10/jpeg-substitute/).
func cifarData(dir, format string) (trainSet, testSet *data.Dataset, err error) {
	d := data.Dir(dir)
	if d == "" {
		return nil, nil, fmt.Errorf("cifar10: no data: give --data DIR or set %s", data.EnvDir)
	}
	switch format {
	case "bin":
		if sub := filepath.Join(d, "cifar10", "lossless-subset"); isDir(sub) {
			d = sub
		}
		return cifar10.Load(d)
	case "jpeg":
		src, err := cifarJPEGSource(d)
		if err != nil {
			return nil, nil, err
		}
		if trainSet, _, err = imagefolder.Load(src, cifarJPEGRoot+"/train"); err != nil {
			return nil, nil, err
		}
		if testSet, _, err = imagefolder.Load(src, cifarJPEGRoot+"/test"); err != nil {
			return nil, nil, err
		}
		return trainSet, testSet, nil
	}
	return nil, nil, fmt.Errorf("cifar10: --format %q: want bin or jpeg", format)
}

func cifarJPEGSource(d string) (string, error) {
	if !isDir(d) || isDir(filepath.Join(d, cifarJPEGRoot)) {
		return d, nil // an archive, or a folder holding the tree
	}
	for _, dir := range []string{filepath.Join(d, "cifar10", "jpeg-substitute"), d} {
		if m, _ := filepath.Glob(filepath.Join(dir, "*.tar.gz")); len(m) == 1 {
			return m[0], nil
		}
	}
	return "", fmt.Errorf("cifar10: no JPEG tree in %s: want %s/, one .tar.gz, or cifar10/jpeg-substitute/ with one .tar.gz", d, cifarJPEGRoot)
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// cifarNet builds the model named on the command line; depth and width 0
// keep the book's.
func cifarNet(model string, depth, width int, rng *rand.Rand) (*cifar.Net, error) {
	if depth == 0 && width == 0 {
		return cifar.New(model, rng)
	}
	switch model {
	case "resnet32":
		return cifar.NewResNet(cifar.Sizes{Depth: cmpOr(depth, 32), Width: cmpOr(width, 16), Classes: cifar.Classes}, rng)
	case "vgg":
		return cifar.NewVGG(cifar.Sizes{Depth: cmpOr(depth, 16), Width: cmpOr(width, 64), Classes: cifar.Classes}, rng)
	}
	return cifar.New(model, rng) // the unknown-model error
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// cifarFlags are the flags train and eval share.
type cifarFlags struct {
	model, dir, format string
	depth, width       int
	batch, testLimit   int
}

func (c *cifarFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.model, "model", "resnet32", "network: resnet32 or vgg (the book's)")
	fs.IntVar(&c.depth, "depth", 0, "layers: resnet 6n+2 (20, 32, 44, 56, 110), vgg 11, 13, 16 or 19 (0: the book's)")
	fs.IntVar(&c.width, "width", 0, "channels of the first stage: resnet 16, vgg 64 in the book (0: the book's)")
	fs.StringVar(&c.dir, "data", "", "CIFAR-10 location: the binary batches' folder, the JPEG tree's .tar.gz, or a data root (default $PLUMB_DATA)")
	fs.StringVar(&c.format, "format", "bin", "bin: the binary batches; jpeg: the JPEG tree")
	fs.IntVar(&c.batch, "batch", 128, "batch size")
	fs.IntVar(&c.testLimit, "test-limit", 0, "test on only the first N test images (0: all)")
}

func trainCIFAR(args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("train cifar10", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c cifarFlags
	c.register(fs)
	epochs := fs.Int("epochs", 1, "passes over the training set")
	lr := fs.Float64("lr", 1e-3, "Adam learning rate")
	seed := fs.Uint64("seed", 1, "seed for initialisation, dropout, augmentation and shuffling")
	save := fs.String("save", "", "write the parameters (safetensors) here after training")
	best := fs.String("best", "", "write the parameters of the epoch with the best test accuracy here")
	limit := fs.Int("limit", 0, "train on only the first N training images (0: all), for quick runs")
	augment := fs.Bool("augment", false, "pad 4, random 32x32 crop and horizontal flip of each training image (off in the book's recipe)")
	device := fs.String("device", "cpu", "where to train: cpu, or cuda (GPU 0; needs a binary built with -tags cuda)")
	logDir := fs.String("log", "", "write a run log (JSON lines: steps, epochs, metrics, RSS) to this directory, for plumb plot/compare/kpi")
	logEvery := fs.Int("log-every", 20, "with --log, a step record every N steps")
	state := fs.String("state", "", "after every epoch, write what a resumed run needs (parameters, optimizer, epoch, step, RNG) to this file")
	resume := fs.String("resume", "", "continue the run saved in this --state file (same flags otherwise)")
	distributed := fs.Bool("dist", dist.Launched() > 1, distUsage)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkDevice(*device); err != nil {
		return fmt.Errorf("train cifar10: %w", err)
	}
	if *logEvery < 1 {
		return fmt.Errorf("train cifar10: --log-every %d, want at least 1", *logEvery)
	}
	pcg := rand.NewPCG(*seed, 0x9e3779b97f4a7c15) // tensor.NewRNG's stream, kept for the trainer
	net, err := cifarNet(c.model, c.depth, c.width, rand.New(pcg))
	if err != nil {
		return err
	}
	trainSet, testSet, err := cifarData(c.dir, c.format)
	if err != nil {
		return err
	}
	if *limit > 0 {
		trainSet = trainSet.Take(*limit)
	}
	if c.testLimit > 0 {
		testSet = testSet.Take(c.testLimit)
	}
	nm, err := cifar.ChannelNorm(trainSet.Tensor("image"))
	if err != nil {
		return err
	}
	if err := net.SetNorm(nm); err != nil {
		return err
	}
	closeDev, err := moveModel(*device, net.Params(), stdout)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeDev()) }()
	opt, err := optim.NewAdam(net.Params(), optim.LR(*lr))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "training %s on %d CIFAR-10 images (%s), testing on %d (Adam lr %g, batch %d, seed %d, augmentation %v)\n",
		c.model, trainSet.Len(), c.format, testSet.Len(), *lr, c.batch, *seed, *augment)
	fmt.Fprintf(stdout, "channel means %.4f, deviations %.4f\n", nm.Mean, nm.Std)
	rec := runlog.Record{Framework: "plumb",
		Model: cifarRunModel(c.model, c.format, c.depth, c.width, *limit, c.testLimit, *epochs, c.batch, *augment),
		Config: map[string]any{"model": c.model, "depth": c.depth, "width": c.width, "format": c.format, "epochs": *epochs,
			"batch": c.batch, "lr": *lr, "seed": *seed, "augment": *augment, "train_size": trainSet.Len(), "test_size": testSet.Len(),
			"optimizer": "adam"}}
	var rp train.Replicas
	leader, leave := true, func(io.Writer) error { return nil }
	if *distributed {
		if rp, leader, leave, err = joinGroup(c.batch, rec, &stdout, &stderr); err != nil {
			return err
		}
	}
	hooks := []train.Hooks{}
	if *logDir != "" && leader {
		log, err := openLog(*logDir, *resume, rec, stderr)
		if err != nil {
			return err
		}
		if log != nil {
			defer log.Close()
			hooks = append(hooks, train.LogTo(log, *logEvery, stderr))
		}
	}
	bar := train.NewBar(stderr)
	epoch := func(e train.Epoch) error {
		bar.Clear()
		fmt.Fprintf(stdout, "epoch %d/%d: train loss %.4f, test loss %.4f, test accuracy %.2f%% (%.1f samples/s, %s + test %s)\n",
			e.Epoch, *epochs, e.TrainLoss, e.Metrics["loss"], 100*e.Metrics["accuracy"], e.SamplesPerSec,
			e.Duration.Round(time.Second), e.EvalDuration.Round(time.Second))
		return nil
	}
	stop := interruptHooks(&hooks, stderr) // h20: Ctrl-C finishes the step and saves --state (interrupt.go)
	defer stop()
	_, err = cifar.Train(net, opt, trainSet, testSet, cifar.Config{
		Epochs: *epochs, Batch: c.batch, Seed: *seed, Augment: *augment, RNG: pcg, BestPath: *best,
		StatePath: *state, ResumeFrom: *resume, Progress: bar.Update, Hooks: append(hooks, train.Hooks{Epoch: epoch}),
		Replicas: rp,
	})
	if err != nil {
		bar.Clear()
		return err
	}
	if *save != "" && leader {
		if err := checkpoint.Save(*save, net.Params(), opt); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "saved %s\n", *save)
	}
	if *logDir != "" {
		fmt.Fprintf(stdout, "run log in %s (plumb plot %s)\n", *logDir, *logDir)
	}
	return leave(stdout)
}

// cifarRunModel names a run's recipe in its log, and so its KPIs:
// cifar10-<model>, then whatever differs from the book's recipe (the
// binary batches, the book's depth and width, all images, 1 epoch, batch
// 128, the whole test set, no augmentation), such as cifar10-resnet32-jpeg or
// cifar10-vgg-limit4000-epochs3. bench/cifar_data.py names runs the same way.
func cifarRunModel(model, format string, depth, width, limit, testLimit, epochs, batch int, augment bool) string {
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

func evalCIFAR(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eval cifar10", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c cifarFlags
	c.register(fs)
	load := fs.String("load", "", "checkpoint written by plumb train cifar10 --save or --best (same --model, --depth, --width)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *load == "" {
		return errors.New("eval cifar10: --load FILE is required")
	}
	net, err := cifarNet(c.model, c.depth, c.width, tensor.NewRNG(0))
	if err != nil {
		return err
	}
	_, testSet, err := cifarData(c.dir, c.format)
	if err != nil {
		return err
	}
	if c.testLimit > 0 {
		testSet = testSet.Take(c.testLimit)
	}
	if err := checkpoint.Load(*load, net.Params(), nil); err != nil {
		return err
	}
	acc, loss, err := cifar.Evaluate(net, testSet, c.batch)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s from %s: test loss %.4f, test accuracy %.2f%% on %d images (%s)\n", c.model, *load, loss, 100*acc, testSet.Len(), c.format)
	return nil
}
