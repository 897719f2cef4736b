package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data"
	mnistdata "github.com/plumbml/plumb/data/mnist"
	"github.com/plumbml/plumb/data/mnist/embedded"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/tensor"
	trainpkg "github.com/plumbml/plumb/train"
)

// mnistData loads MNIST from dir (or $PLUMB_DATA), else the embedded copy.
func mnistData(dir string) (train, test *data.Dataset, err error) {
	if d := data.Dir(dir); d != "" {
		return mnistdata.Load(d)
	}
	return embedded.Load()
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

func trainMNIST(args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("train mnist", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "cnn", "network: cnn or mlp")
	epochs := fs.Int("epochs", 1, "passes over the training set")
	batch := fs.Int("batch", 64, "batch size")
	lr := fs.Float64("lr", 1e-3, "Adam learning rate")
	seed := fs.Uint64("seed", 1, "seed for initialisation and shuffling")
	save := fs.String("save", "", "write a checkpoint (safetensors) here after training")
	dir := fs.String("data", "", "directory with the MNIST IDX files (default $PLUMB_DATA, else the embedded copy)")
	limit := fs.Int("limit", 0, "train on only the first N training images (0: all), for quick runs")
	device := fs.String("device", "cpu", "where to train: cpu, or cuda (GPU 0; needs a binary built with -tags cuda)")
	logDir := fs.String("log", "", "write a run log (JSON lines: steps, epochs, metrics, RSS) to this directory, for plumb plot/compare/kpi")
	logEvery := fs.Int("log-every", 50, "with --log, a step record every N steps")
	state := fs.String("state", "", "after every epoch, write what a resumed run needs (parameters, optimizer, epoch, step) to this file")
	resume := fs.String("resume", "", "continue the run saved in this --state file (same flags otherwise)")
	dtype := fs.String("dtype", "float32", "float32, or float64 (a model and images in double precision: slower, but round-off no longer steers the run, e.g. to compare --dist runs step by step)")
	df := addDistFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dt, ok := map[string]tensor.DType{"float32": tensor.Float32, "float64": tensor.Float64}[*dtype]
	if !ok {
		return fmt.Errorf("train mnist: --dtype %q, want float32 or float64", *dtype)
	}
	// Everything that can be checked before the data loads and training
	// starts is checked here, so a mistake never costs a training run.
	switch {
	case *epochs < 1:
		return fmt.Errorf("train mnist: --epochs %d, want at least 1", *epochs)
	case *batch < 1:
		return fmt.Errorf("train mnist: --batch %d, want at least 1", *batch)
	case *limit < 0:
		return fmt.Errorf("train mnist: --limit %d, want 0 (all images) or more", *limit)
	case !(*lr > 0) || math.IsInf(*lr, 0):
		return fmt.Errorf("train mnist: --lr %g, want a positive finite number", *lr)
	case *logEvery < 1:
		return fmt.Errorf("train mnist: --log-every %d, want at least 1", *logEvery)
	case *df.on && *device != "cpu":
		return fmt.Errorf("train mnist: --dist trains on the CPU; drop --device %s", *device)
	case *device == "cuda" && dt != tensor.Float32:
		return fmt.Errorf("train mnist: --device cuda trains in float32; drop --dtype %s", *dtype)
	}
	if err := checkDevice(*device); err != nil {
		return err
	}
	net, err := mnist.New(*model, tensor.NewRNG(*seed), layers.DType(dt))
	if err != nil {
		return err
	}
	if *save != "" {
		if err := checkpoint.CheckPath(*save); err != nil {
			return fmt.Errorf("train mnist: --save: %w", err)
		}
	}
	train, test, err := mnistData(*dir)
	if err != nil {
		return err
	}
	if *limit > 0 {
		train = train.Take(*limit)
	}
	if train, err = imagesAs(train, dt); err != nil {
		return err
	}
	if test, err = imagesAs(test, dt); err != nil {
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
	cfg := mnist.Config{Epochs: *epochs, Batch: *batch, Seed: *seed, StatePath: *state, ResumeFrom: *resume}
	rec := runlog.Record{Framework: "plumb", Model: runModel(*model, *limit, *epochs, *batch),
		Config: map[string]any{"model": *model, "epochs": *epochs, "batch": *batch, "lr": *lr, "seed": *seed, "dtype": *dtype,
			"train_size": train.Len(), "test_size": test.Len(), "device": *device, "optimizer": "adam"}}
	leader := true
	if *df.on {
		// err is the function's result, not a new variable: the
		// deferred call below must see whether training failed.
		var finish func(io.Writer) error
		if finish, err = startDist(df, &cfg, rec, net, test, &stdout, &stderr); err != nil {
			return err
		}
		defer func() {
			if err == nil { // after an error, exit without the group's collectives (see joinGroup)
				err = finish(stdout)
			}
		}()
		leader = cfg.Replicas.Rank() == 0
	}
	fmt.Fprintf(stdout, "training %s on %d images, testing on %d (Adam lr %g, batch %d, seed %d)\n",
		*model, train.Len(), test.Len(), *lr, *batch, *seed)
	bar := trainpkg.NewBar(stderr)
	var log *runlog.Writer
	if *logDir != "" && leader {
		log, err = openLog(*logDir, *resume, rec, stderr)
		if err != nil {
			return err
		}
		if log != nil {
			defer log.Close()
			cfg.Hooks = append(cfg.Hooks, trainpkg.LogTo(log, *logEvery, stderr))
		}
	}
	epochEnd := func(e mnist.Epoch) {
		bar.Clear()
		fmt.Fprintf(stdout, "epoch %d/%d: train loss %.4f, test loss %.4f, test accuracy %.2f%% (%.0f samples/s, %s)\n",
			e.Epoch, *epochs, e.TrainLoss, e.TestLoss, 100*e.TestAccuracy, e.SamplesPerSec, e.Duration.Round(time.Second))
	}
	stop := interruptHooks(&cfg.Hooks, stderr) // h20: Ctrl-C finishes the step and saves --state (interrupt.go)
	defer stop()
	err = mnist.Train(net, opt, train, test, cfg, bar.Update, epochEnd)
	if err != nil {
		bar.Clear()
		if *save != "" {
			return fmt.Errorf("%w\n(nothing saved to %s)", err, *save)
		}
		return err
	}
	if *save != "" && leader {
		if err := checkpoint.Save(*save, net.Params(), opt); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "saved %s\n", *save)
	}
	if log != nil {
		fmt.Fprintf(stdout, "run log in %s (plumb plot %s)\n", *logDir, *logDir)
	}
	return nil
}

// runModel names a run's recipe in its log, and so its KPIs: mnist-<model>,
// then whatever differs from the book's recipe (all images, 1 epoch, batch
// 64), such as mnist-cnn-limit4000.
func runModel(model string, limit, epochs, batch int) string {
	name := "mnist-" + model
	if limit > 0 {
		name += fmt.Sprintf("-limit%d", limit)
	}
	if epochs != 1 {
		name += fmt.Sprintf("-epochs%d", epochs)
	}
	if batch != 64 {
		name += fmt.Sprintf("-batch%d", batch)
	}
	return name
}

func evalMNIST(args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("eval mnist", flag.ContinueOnError)
	fs.SetOutput(stderr)
	model := fs.String("model", "cnn", "network the checkpoint holds: cnn or mlp")
	load := fs.String("load", "", "checkpoint written by plumb train mnist --save")
	dir := fs.String("data", "", "directory with the MNIST IDX files (default $PLUMB_DATA, else the embedded copy)")
	device := fs.String("device", "cpu", "where to evaluate: cpu, or cuda (GPU 0; needs a binary built with -tags cuda)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *load == "" {
		return fmt.Errorf("eval mnist: --load FILE is required")
	}
	if err := checkDevice(*device); err != nil {
		return err
	}
	net, err := mnist.New(*model, tensor.NewRNG(0))
	if err != nil {
		return err
	}
	if err := checkpoint.Load(*load, net.Params(), nil); err != nil {
		return fmt.Errorf("%w%s", err, otherModelHint(*load, *model))
	}
	_, test, err := mnistData(*dir)
	if err != nil {
		return err
	}
	closeDev, err := moveModel(*device, net.Params(), stdout)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeDev()) }()
	acc, loss, err := mnist.Evaluate(net, test, 500)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s from %s: test loss %.4f, test accuracy %.2f%% on %d images\n", *model, *load, loss, 100*acc, test.Len())
	return nil
}

// otherModelHint names the model the checkpoint at path holds when it is
// not the one asked for (the usual cause of a mismatch), or returns "".
func otherModelHint(path, asked string) string {
	for _, name := range []string{"cnn", "mlp"} {
		if name == asked {
			continue
		}
		net, err := mnist.New(name, tensor.NewRNG(0))
		if err == nil && checkpoint.Load(path, net.Params(), nil) == nil {
			return fmt.Sprintf("\n(the checkpoint holds the %s: --model %s?)", name, name)
		}
	}
	return ""
}
