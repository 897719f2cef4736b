// Command steady measures how steady Plumb's benchmarks are (issue 40,
// item 1): it runs one existing Go benchmark in a fresh test process for
// N blocks, each block as many iterations as fill the block time, timed as
// one (go test's -test.benchtime and -test.count: each repetition ramps
// up, then reports one block of at least the block time), and keeps every
// block's time per iteration, not only the best. A second mode reads those
// records from every run and prints, per workload and thread count, the
// best, median and 90th-percentile block and the spread median/best − 1,
// as a markdown table. bench/steady.sh builds the test binaries and runs
// the workloads in interleaved rounds.
//
//	steady run -bins DIR -workload sgemm -threads 2 [-blocks 10] [-blocktime 0.5s] >>log
//	steady table <log
//
// A record is one line: workload, threads, iterations in the block and
// milliseconds per iteration.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Workload is one benchmark the spread is measured on: the package whose
// test binary holds it (pkg.test, run in that package's directory) and the
// -test.bench pattern that selects exactly one benchmark in it.
type Workload struct {
	Name, Label, Pkg, Bench string
}

// Workloads are issue 40's table, in its order. The ResNet-32 benchmark
// uses b.Loop, whose block also counts its first (cold) iteration, and
// its reported time per iteration leaves out the SGEMM it times beside
// the convolutions (with the timer stopped).
var Workloads = []Workload{
	{"sgemm", "SGEMM 1024³", "internal/gemm", "^BenchmarkSgemm$/^1024x1024x1024$"},
	{"mlp", "MLP train step, batch 64", "bench", "^BenchmarkMLPTrainPlumb$"},
	{"cnn", "MNIST CNN train step", "bench", "^BenchmarkCNNTrainStep$/^release$"},
	{"lstm", "LSTM b32 T100 h256", "graph", "^BenchmarkLSTMFused$"},
	{"conv", "ResNet-32 convolutions", "ops", "^BenchmarkConv2DResNet32$"},
}

func lookup(name string) (Workload, error) {
	var names []string
	for _, w := range Workloads {
		if w.Name == name {
			return w, nil
		}
		names = append(names, w.Name)
	}
	return Workload{}, fmt.Errorf("steady: unknown workload %q, want one of %s", name, strings.Join(names, ", "))
}

// Block is one timed block: its iterations and milliseconds per iteration.
type Block struct {
	Iters int
	MS    float64
}

// Run runs the benchmark matching pattern in the test binary bin, in a
// fresh process in directory dir at threads threads (-test.cpu, which sets
// GOMAXPROCS), for blocks blocks of at least blockTime each, and returns
// every block.
func Run(bin, dir, pattern string, threads, blocks int, blockTime time.Duration) ([]Block, error) {
	if threads < 1 || blocks < 1 || blockTime <= 0 {
		return nil, fmt.Errorf("steady: %d threads, %d blocks of %v, want at least one of each and a positive block time", threads, blocks, blockTime)
	}
	cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", pattern,
		"-test.benchtime", blockTime.String(), "-test.count", strconv.Itoa(blocks), "-test.cpu", strconv.Itoa(threads))
	cmd.Dir = dir
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("steady: %s -test.bench %s: %w\n%s%s", bin, pattern, err, out.Bytes(), stderr.Bytes())
	}
	got, err := Parse(&out)
	if err != nil {
		return nil, fmt.Errorf("steady: %s -test.bench %s: %w", bin, pattern, err)
	}
	if len(got) != blocks {
		return nil, fmt.Errorf("steady: %s -test.bench %s reported %d blocks, want %d (the pattern must match one benchmark)\n%s", bin, pattern, len(got), blocks, out.Bytes())
	}
	return got, nil
}

// Parse reads go test's benchmark output and returns one block per result
// line ("BenchmarkX-2  84  12345678 ns/op ..."); every line must name the
// same benchmark. Other lines are skipped.
func Parse(r io.Reader) ([]Block, error) {
	var blocks []Block
	name := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || f[3] != "ns/op" {
			continue
		}
		iters, err := strconv.Atoi(f[1])
		if err != nil || iters < 1 {
			return nil, fmt.Errorf("benchmark line %q: iterations %q, want a positive integer", sc.Text(), f[1])
		}
		ns, err := strconv.ParseFloat(f[2], 64)
		if err != nil || !(ns > 0) {
			return nil, fmt.Errorf("benchmark line %q: %q ns/op, want a positive number", sc.Text(), f[2])
		}
		if name != "" && f[0] != name {
			return nil, fmt.Errorf("benchmark lines name %s and %s, want one benchmark", name, f[0])
		}
		name = f[0]
		blocks = append(blocks, Block{iters, ns / 1e6})
	}
	return blocks, sc.Err()
}

// Record is one block of one run, as a line of the log.
type Record struct {
	Workload string
	Threads  int
	Block
}

// ReadRecords reads records, one per line: workload, threads, iterations,
// milliseconds per iteration. Blank lines are skipped.
func ReadRecords(r io.Reader) ([]Record, error) {
	var recs []Record
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 {
			return nil, fmt.Errorf("steady: record line %d %q has %d fields, want 4 (workload threads iterations ms)", n, sc.Text(), len(f))
		}
		threads, err1 := strconv.Atoi(f[1])
		iters, err2 := strconv.Atoi(f[2])
		ms, err3 := strconv.ParseFloat(f[3], 64)
		if err := errors.Join(err1, err2, err3); err != nil || threads < 1 || iters < 1 || !(ms > 0) {
			return nil, fmt.Errorf("steady: record line %d %q: want positive threads, iterations and milliseconds", n, sc.Text())
		}
		recs = append(recs, Record{f[0], threads, Block{iters, ms}})
	}
	return recs, sc.Err()
}

// Table writes a markdown table of recs: one row per workload (in
// Workloads' order, then any others by first appearance) and thread
// count, with its blocks' best, median and p90 milliseconds per iteration
// and the spread.
func Table(w io.Writer, recs []Record) error {
	type key struct {
		name    string
		threads int
	}
	samples := map[key][]float64{}
	var order []key
	for _, r := range recs {
		k := key{r.Workload, r.Threads}
		if _, ok := samples[k]; !ok {
			order = append(order, k)
		}
		samples[k] = append(samples[k], r.MS)
	}
	rank := func(name string) int {
		for i, wl := range Workloads {
			if wl.Name == name {
				return i
			}
		}
		return len(Workloads)
	}
	label := func(name string) string {
		if wl, err := lookup(name); err == nil {
			return wl.Label
		}
		return name
	}
	slices.SortStableFunc(order, func(a, b key) int {
		return cmp.Or(cmp.Compare(rank(a.name), rank(b.name)), strings.Compare(a.name, b.name), cmp.Compare(a.threads, b.threads))
	})
	fmt.Fprintln(w, "| workload | threads | blocks | best (ms) | median (ms) | p90 (ms) | spread |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, k := range order {
		s, err := Summarize(samples[k])
		if err != nil {
			return fmt.Errorf("%s at %d threads: %w", k.name, k.threads, err)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s | %.0f%% |\n", label(k.name), k.threads, s.Blocks,
			ms(s.Best), ms(s.Median), ms(s.P90), 100*s.Spread())
	}
	return nil
}

// ms formats milliseconds with three significant digits, as the issue's
// table gives them, and whole milliseconds from 1000 up (no exponent).
func ms(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("steady: want a mode, run or table")
	}
	switch args[0] {
	case "table":
		recs, err := ReadRecords(stdin)
		if err != nil {
			return err
		}
		return Table(stdout, recs)
	case "run":
		return runMode(args[1:], stdout)
	}
	return fmt.Errorf("steady: unknown mode %q, want run or table", args[0])
}

func runMode(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("steady run", flag.ContinueOnError)
	bins := fs.String("bins", "", "directory holding the test binaries, named after their package's last element (gemm.test, bench.test, graph.test, ops.test)")
	root := fs.String("root", ".", "the module's root: each binary runs in its package's directory under it")
	name := fs.String("workload", "", "the workload: sgemm, mlp, cnn, lstm or conv")
	threads := fs.Int("threads", 1, "threads (GOMAXPROCS)")
	blocks := fs.Int("blocks", 10, "blocks per run")
	blockTime := fs.Duration("blocktime", 500*time.Millisecond, "the least time a block runs for")
	if err := fs.Parse(args); err != nil {
		return err
	}
	wl, err := lookup(*name)
	if err != nil {
		return err
	}
	if *bins == "" {
		return errors.New("steady: run needs -bins, the directory of the test binaries")
	}
	bin, err := filepath.Abs(filepath.Join(*bins, filepath.Base(wl.Pkg)+".test"))
	if err != nil {
		return err
	}
	got, err := Run(bin, filepath.Join(*root, wl.Pkg), wl.Bench, *threads, *blocks, *blockTime)
	if err != nil {
		return err
	}
	for _, b := range got {
		fmt.Fprintf(stdout, "%s %d %d %.6g\n", wl.Name, *threads, b.Iters, b.MS)
	}
	return nil
}
