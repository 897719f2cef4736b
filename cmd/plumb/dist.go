package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/dist"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/train"
)

// distFlags are the flags of a data-parallel run (plumb train --dist).
type distFlags struct {
	on         *bool
	state      *string
	lossTrace  *string
	evalEvery  *int
	evalImages *int
	target     *float64
}

func addDistFlags(fs *flag.FlagSet) distFlags {
	return distFlags{
		on: fs.Bool("dist", dist.Launched() > 1,
			"data-parallel training through the generic trainer: every process started by mpirun trains on its shard with --batch examples a step (default: on when mpirun started several processes)"),
		state:      fs.String("state", "", "with --dist: write the resumable state here after every epoch (rank 0, atomically), and resume from it when it exists"),
		lossTrace:  fs.String("loss-trace", "", "with --dist: write every step's loss over all ranks here (rank 0; lines: epoch step loss)"),
		evalEvery:  fs.Int("eval-every", 0, "with --dist: also measure test accuracy every N steps (rank 0, on --eval-images test images, timer paused) to report the time to --target"),
		evalImages: fs.Int("eval-images", 1000, "test images for --eval-every"),
		target:     fs.Float64("target", 0.6, "test accuracy whose time --eval-every reports"),
	}
}

// trainMNISTDist trains net through train.Run, data-parallel over the
// processes mpirun started (or alone), and prints each epoch from rank 0.
func trainMNISTDist(f distFlags, net mnist.Model, opt optim.Optimizer, trainSet, test *data.Dataset, cfg mnist.Config, save string, stdout, stderr io.Writer) (err error) {
	comm, err := dist.Open()
	if err != nil {
		return err
	}
	defer func() {
		if cerr := comm.Close(); err == nil {
			err = cerr
		}
	}()
	rank, size := comm.Rank(), comm.Size()
	whole, err := data.NewLoader(trainSet, cfg.Batch, data.Shuffle(cfg.Seed))
	if err != nil {
		return err
	}
	shard, err := whole.Shard(rank, size)
	if err != nil {
		return err
	}
	leader := rank == 0
	if !leader {
		stdout, stderr = io.Discard, io.Discard
	}
	fmt.Fprintf(stdout, "data-parallel over %d process(es) (MPI: %v): batch %d per process, %d in all, %d steps an epoch\n",
		size, dist.MPI, cfg.Batch, cfg.Batch*size, shard.NumBatches())
	loss := func(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
		return graph.SoftmaxCrossEntropy(net.Forward(t.Const(b.Tensor("image"))), b.Tensor("label")), b.Len()
	}
	bar := train.NewBar(stderr)
	tc := train.Config[*data.Batch]{
		Params: net.Params(), Optimizer: opt, Train: shard, Loss: loss, Epochs: cfg.Epochs,
		Replicas: dist.NewReplicas(comm, 0),
		Evaluate: func(func(int, int)) (train.Metrics, error) {
			acc, l, err := mnist.Evaluate(net, test, 500)
			return train.Metrics{"accuracy": acc, "loss": l}, err
		},
		Monitor: "accuracy", Maximize: true, Progress: bar.Update, StatePath: *f.state,
	}
	if *f.state != "" {
		if _, err := os.Stat(*f.state); err == nil {
			tc.ResumeFrom = *f.state
			fmt.Fprintf(stdout, "resuming from %s\n", *f.state)
		}
	}
	began := time.Now()
	var paused time.Duration // spent measuring accuracy mid-epoch
	if leader {
		tc.Hooks = append(tc.Hooks, train.Hooks{Epoch: func(e train.Epoch) error {
			bar.Clear()
			fmt.Fprintf(stdout, "epoch %d/%d: train loss %.4f, test loss %.4f, test accuracy %.2f%% (%.0f samples/s, %s)\n",
				e.Epoch, cfg.Epochs, e.TrainLoss, e.Metrics["loss"], 100*e.Metrics["accuracy"], e.SamplesPerSec, e.Duration.Round(time.Second))
			return nil
		}})
		if h, closeTrace, err := traceHook(*f.lossTrace); err != nil {
			return err
		} else if h != nil {
			defer closeTrace()
			tc.Hooks = append(tc.Hooks, *h)
		}
		if *f.evalEvery > 0 {
			tc.Hooks = append(tc.Hooks, targetHook(f, net, test, began, &paused, stdout))
		}
	}
	if _, err := train.Run(tc); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "trained in %s (%s measuring accuracy mid-epoch)\n", time.Since(began).Round(time.Millisecond), paused.Round(time.Millisecond))
	if peak, err := peakRSS(); err == nil {
		all, err := comm.Allgather([]byte(strconv.FormatInt(peak, 10)))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "peak memory (VmHWM) per rank, MiB:")
		for _, b := range all {
			kb, _ := strconv.ParseInt(string(b), 10, 64)
			fmt.Fprintf(stdout, " %.0f", float64(kb)/1024)
		}
		fmt.Fprintln(stdout)
	}
	if save != "" && leader {
		if err := checkpoint.Save(save, net.Params(), opt); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "saved %s\n", save)
	}
	return nil
}

// traceHook writes every step's loss to path (nothing when path is "").
func traceHook(path string) (*train.Hooks, func(), error) {
	if path == "" {
		return nil, nil, nil
	}
	file, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	w := bufio.NewWriter(file)
	h := &train.Hooks{Step: func(s train.Step) error {
		_, err := fmt.Fprintf(w, "%d %d %.9g\n", s.Epoch, s.Step, s.Loss)
		return err
	}}
	return h, func() { w.Flush(); file.Close() }, nil
}

// targetHook measures test accuracy every --eval-every steps on the first
// --eval-images test images and reports when it first reaches --target,
// in training time (the measurements' own time left out).
func targetHook(f distFlags, net mnist.Model, test *data.Dataset, began time.Time, paused *time.Duration, stdout io.Writer) train.Hooks {
	subset := test.Take(min(*f.evalImages, test.Len()))
	reached := false
	return train.Hooks{Step: func(s train.Step) error {
		if reached || s.GlobalStep%int64(*f.evalEvery) != 0 {
			return nil
		}
		t := time.Now()
		acc, _, err := mnist.Evaluate(net, subset, 500)
		*paused += time.Since(t)
		if err != nil {
			return err
		}
		if acc >= *f.target {
			reached = true
			fmt.Fprintf(stdout, "test accuracy %.4f >= %g after %d steps, %s of training\n",
				acc, *f.target, s.GlobalStep, (time.Since(began) - *paused).Round(time.Millisecond))
		}
		return nil
	}}
}

// peakRSS is this process's peak resident memory in KiB (Linux's VmHWM).
func peakRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}
