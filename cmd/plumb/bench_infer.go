package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/tensor"
)

// benchInferUsage documents plumb bench-infer.
const benchInferUsage = `usage:
  plumb bench-infer [--batch 1,8,64] [--concurrency 1,8,64] [--duration 2s] [--seq-len N] [--no-fusion] MODEL
  plumb bench-infer --load CKPT [--batch 1,8,64] [--concurrency 1,8,64] [--duration 2s] [--seq-len N] [--no-fusion]
      compiles the inference plan of MODEL (freshly initialised weights) or
      of the checkpoint's model for each batch size, runs it from each
      number of goroutines at once for the duration (one plan, an arena per
      call in flight), and prints a table of calls, throughput (items/s)
      and the latency percentiles p50, p90 and p99 of one call, in ms,
      against batch size and concurrency; inputs are blank images, or
      sequences of --seq-len words
      MODEL: mnist-mlp, mnist-cnn, resnet32, text-cnn, text-lstm, translate-encoder
`

// benchRow is one line of plumb bench-infer's table: a plan of batch
// rows run from concurrency goroutines.
type benchRow struct {
	batch, concurrency int
	calls              int
	elapsed            time.Duration
	p50, p90, p99      time.Duration
}

// itemsPerSec is the throughput: rows computed per second of wall time.
func (r benchRow) itemsPerSec() float64 {
	return float64(r.calls*r.batch) / r.elapsed.Seconds()
}

// benchInferCommand is plumb bench-infer.
func benchInferCommand(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench-infer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchInferUsage) }
	load := fs.String("load", "", "a checkpoint (written by plumb train --save) whose model to time, instead of MODEL")
	batches := fs.String("batch", "1,8,64", "batch sizes, comma-separated")
	concs := fs.String("concurrency", "1,8,64", "goroutines calling the plan at once, comma-separated")
	duration := fs.Duration("duration", 2*time.Second, "how long each (batch, concurrency) pair runs")
	seqLen := fs.Int("seq-len", 20, "words of each sequence (text models)")
	noFusion := fs.Bool("no-fusion", false, "compile without the fusion passes")
	var rest []string
	for { // the model and flags in any order
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		rest, args = append(rest, fs.Arg(0)), fs.Args()[1:]
	}
	bs, err := positiveList("--batch", *batches)
	if err != nil {
		return err
	}
	cs, err := positiveList("--concurrency", *concs)
	if err != nil {
		return err
	}
	switch {
	case *duration <= 0:
		return fmt.Errorf("bench-infer: --duration %v, want a positive duration such as 2s", *duration)
	case *seqLen < 1:
		return fmt.Errorf("bench-infer: --seq-len %d, want at least 1", *seqLen)
	case *load != "" && len(rest) > 0:
		return fmt.Errorf("bench-infer: --load %s and MODEL %s: time one or the other", *load, rest[0])
	case *load == "" && len(rest) != 1:
		return fmt.Errorf("bench-infer: want one MODEL (%s) or --load CKPT, got %d arguments", strings.Join(modelNames(), ", "), len(rest))
	}
	build, what, err := benchSource(*load, rest)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s; GOMAXPROCS %d; %v a row\n", what, runtime.GOMAXPROCS(0), *duration)
	fmt.Fprintf(stdout, benchHead, "batch", "concurrency", "calls", "items/s", "p50 ms", "p90 ms", "p99 ms")
	for _, b := range bs {
		forward, in, err := build(b, *seqLen)
		if err != nil {
			return fmt.Errorf("bench-infer: batch %d: %w", b, err)
		}
		g, err := infer.Trace(forward, in...)
		if err != nil {
			return fmt.Errorf("bench-infer: batch %d: %w", b, err)
		}
		p, err := g.Compile(infer.Options{NoFusion: *noFusion})
		if err != nil {
			return fmt.Errorf("bench-infer: batch %d: %w", b, err)
		}
		for _, c := range cs {
			r, err := benchPlan(p, in, b, c, *duration)
			if err != nil {
				return fmt.Errorf("bench-infer: batch %d, concurrency %d: %w", b, c, err)
			}
			fmt.Fprintf(stdout, benchLine, r.batch, r.concurrency, r.calls, r.itemsPerSec(),
				ms(r.p50), ms(r.p90), ms(r.p99))
		}
	}
	return nil
}

// benchHead and benchLine are the table's columns, fixed widths so that
// each row prints as it is measured.
const (
	benchHead = "%6s %12s %9s %11s %9s %9s %9s\n"
	benchLine = "%6d %12d %9d %11.1f %9.3f %9.3f %9.3f\n"
)

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchSource returns what makes the forward pass and example inputs of
// a batch size: the checkpoint's model (load), or the built-in model
// named in rest, with a line saying which.
func benchSource(load string, rest []string) (func(batch, seqLen int) (infer.Forward, []*tensor.Tensor, error), string, error) {
	if load == "" {
		build, ok := inferModels[rest[0]]
		if !ok {
			return nil, "", fmt.Errorf("bench-infer: unknown model %q (want %s)", rest[0], strings.Join(modelNames(), ", "))
		}
		return build, rest[0] + " (fresh weights)", nil
	}
	r, err := restorePlanned(load, "")
	if err != nil {
		return nil, "", fmt.Errorf("bench-infer: %w", err)
	}
	forward, _, err := r.p.Forward(r.m)
	if err != nil {
		return nil, "", fmt.Errorf("bench-infer: %w", err)
	}
	return func(batch, seqLen int) (infer.Forward, []*tensor.Tensor, error) {
		in, err := r.p.Example(r.m, batch, seqLen)
		return forward, in, err
	}, fmt.Sprintf("%s (a %s model)", load, r.spec.Name), nil
}

// positiveList parses a comma-separated list of positive integers.
func positiveList(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bench-infer: %s %q: want positive integers separated by commas, such as 1,8,64", flagName, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchPlan runs p on in from conc goroutines at once for d, each with
// its own output, after one warm-up call each (which sizes the plan's
// free list of arenas for conc calls in flight), and returns the row:
// the calls that finished, the wall time from the start until the last
// one did, and the nearest-rank percentiles of the calls' latencies (the
// smallest latency at or above which p% of the calls lie).
func benchPlan(p *infer.Plan, in []*tensor.Tensor, batch, conc int, d time.Duration) (benchRow, error) {
	outs := p.Outputs()
	if len(outs) == 0 {
		return benchRow{}, errors.New("the plan has no output")
	}
	lat := make([][]time.Duration, conc)
	errs := make([]error, conc)
	var wg sync.WaitGroup
	call := func(g int, y *tensor.Tensor) bool {
		began := time.Now()
		if err := p.Run(y, in...); err != nil {
			errs[g] = err
			return false
		}
		lat[g] = append(lat[g], time.Since(began))
		return true
	}
	ys := make([]*tensor.Tensor, conc)
	for g := range conc {
		ys[g] = tensor.Empty(outs[0].DType, outs[0].Shape...)
		wg.Add(1)
		go func() { defer wg.Done(); call(g, ys[g]) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return benchRow{}, err
	}
	began := time.Now()
	deadline := began.Add(d)
	for g := range conc {
		lat[g] = lat[g][:0]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && call(g, ys[g]) {
			}
		}()
	}
	wg.Wait()
	row := benchRow{batch: batch, concurrency: conc, elapsed: time.Since(began)}
	if err := errors.Join(errs...); err != nil {
		return benchRow{}, err
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return benchRow{}, errors.New("no call finished")
	}
	slices.Sort(all)
	row.calls = len(all)
	row.p50, row.p90, row.p99 = nearestRank(all, 50), nearestRank(all, 90), nearestRank(all, 99)
	return row, nil
}

// nearestRank is the p-th percentile of sorted by the nearest-rank
// method: the value at rank ⌈p/100 · n⌉ (1-based).
func nearestRank(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}
