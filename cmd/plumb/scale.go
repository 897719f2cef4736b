package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/plumbml/plumb/dist"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/tensor"
)

// bookModel is what the projection needs of a model: its trainable
// parameters (the float32 gradient averaged every step) and its forward
// multiply-adds per example.
type bookModel struct {
	name    string
	params  int
	tensors int // trainable parameter tensors
	macs    float64
}

// convCost is a convolution's weights (no bias: batch norm follows) and
// multiply-adds for one example.
func convCost(cin, cout, k, outH, outW int) (params int, macs float64) {
	w := cout * cin * k * k
	return w, float64(outH*outW) * float64(w)
}

// resNet32 counts the CIFAR-10 ResNet-32 of He et al. 2016 (section 4.2):
// a 3×3 stem of 16 filters, three stages of five basic blocks (two 3×3
// convolutions each) at 16, 32 and 64 filters on 32², 16² and 8² maps,
// identity shortcuts with zero-padding (option A, no weights), batch norm
// (scale and shift) after every convolution, global average pooling and a
// 64→10 fully connected layer: 0.46M parameters, as the paper says.
func resNet32() bookModel {
	p, m := convCost(3, 16, 3, 32, 32)
	p += 2 * 16
	in := 16
	for stage, size := range []int{32, 16, 8} {
		out := 16 << stage
		for block := range 5 {
			for conv := range 2 {
				cin := out
				if block == 0 && conv == 0 {
					cin = in
				}
				cp, cm := convCost(cin, out, 3, size, size)
				p, m = p+cp+2*out, m+cm
			}
		}
		in = out
	}
	// 31 convolutions, their 31 batch norms' scale and shift, the fc's 2
	return bookModel{"resnet32 (CIFAR-10)", p + 64*10 + 10, 31 + 2*31 + 2, m + 64*10}
}

// mnistModel counts the parameters of Plumb's MNIST model name and takes
// its multiply-adds from the architecture (VALID 5×5 convolutions to
// 24² and 8² maps, then 800→10; or 784-128-64-10).
func mnistModel(name string) (bookModel, error) {
	net, err := mnist.New(name, tensor.NewRNG(1))
	if err != nil {
		return bookModel{}, err
	}
	macs := float64(784*128 + 128*64 + 64*10)
	if name == "cnn" {
		_, c1 := convCost(1, 20, 5, 24, 24)
		_, c2 := convCost(20, 50, 5, 8, 8)
		macs = c1 + c2 + 800*10
	}
	m := bookModel{name: "mnist-" + name, macs: macs}
	for _, p := range net.Params() {
		if p.Trainable {
			m.params += p.Value.Size()
			m.tensors++
		}
	}
	return m, nil
}

// messages are the sizes of the allreduces of one step of m with
// dist.Replicas: the header (loss, examples, two flags per tensor, as
// float64) and the float32 gradients in buckets of DefaultBucketBytes.
func (m bookModel) messages() []float64 {
	out := []float64{8 * float64(2+2*m.tensors)}
	for left := 4 * float64(m.params); left > 0; left -= dist.DefaultBucketBytes {
		out = append(out, min(left, dist.DefaultBucketBytes))
	}
	return out
}

// scaleReport prints the alpha-beta projection of data-parallel training
// of the book models. Under mpirun it first measures allreduces of each
// model's gradient size between the processes here.
func scaleReport(args []string, stdout, stderr io.Writer) (err error) {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	workers := fs.String("workers", "8,16,32", "worker counts to project")
	gbits := fs.String("gbits", "10,100", "network line rates, Gbit/s, each used whole for the payload")
	latency := fs.String("latency", "25us,3us", "per-message latency (alpha) of each network: TCP over 10 GbE, RDMA over 100 Gbit/s")
	batch := fs.Int("batch", 64, "examples per worker per step")
	gflops := fs.Float64("gflops", 40, "training GFLOP/s of one worker (one core here runs the CNN GEMMs at about this), giving each model's compute time per step from its multiply-adds: 6 FLOPs per multiply-add for forward and backward")
	rates := fs.String("rate", "", "measured training examples/s of one worker, overriding --gflops for those models: name=rate,... (e.g. mnist-cnn=1500)")
	repeat := fs.Int("repeat", 50, "allreduces timed per size when run under mpirun")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ws, err := intList(*workers)
	if err != nil {
		return err
	}
	nets, err := networks(*gbits, *latency)
	if err != nil {
		return err
	}
	measured, err := rateMap(*rates)
	if err != nil {
		return err
	}
	var models []bookModel
	for _, name := range []string{"mlp", "cnn"} {
		m, err := mnistModel(name)
		if err != nil {
			return err
		}
		models = append(models, m)
	}
	models = append(models, resNet32())

	comm, err := dist.Open()
	if err != nil {
		return err
	}
	defer func() {
		if cerr := comm.Close(); err == nil {
			err = cerr
		}
	}()
	if comm.Rank() != 0 {
		stdout = io.Discard
	}
	if err := measureAllreduce(comm, models, *repeat, stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nProjection (alpha-beta ring allreduce, T = 2(p-1)·alpha + 2(p-1)/p · bytes/bandwidth, for each of a step's allreduces: a small header and the float32 gradients in 16 MiB buckets; no overlap with backward; %d examples per worker per step, global batch p×%d)\n", *batch, *batch)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tparams\tgradient MB\tcompute ms/step\tnetwork\tworkers\tallreduce ms\tspeedup\tefficiency\texamples/s\t")
	for _, m := range models {
		compute := time.Duration(float64(*batch) * 6 * m.macs / (*gflops * 1e9) * float64(time.Second))
		if r, ok := measured[m.name]; ok {
			compute = time.Duration(float64(*batch) / r * float64(time.Second))
		}
		bytes := 4 * float64(m.params)
		for _, n := range nets {
			for _, w := range ws {
				p, err := dist.Project(w, *batch, compute, m.messages(), n.Network)
				if err != nil {
					return err
				}
				fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%s\t%d\t%.3f\t%.1f\t%.0f%%\t%.0f\t\n", m.name, m.params, bytes/1e6,
					float64(compute)/1e6, n.name, w, float64(p.Allreduce)/1e6, p.Speedup, 100*p.Efficiency, p.Throughput)
			}
		}
	}
	return tw.Flush()
}

type namedNetwork struct {
	name string
	dist.Network
}

func networks(gbits, latency string) ([]namedNetwork, error) {
	gs, ls := strings.Split(gbits, ","), strings.Split(latency, ",")
	if len(gs) != len(ls) {
		return nil, fmt.Errorf("scale: --gbits %q and --latency %q: want one latency per network", gbits, latency)
	}
	var out []namedNetwork
	for i, g := range gs {
		rate, err := strconv.ParseFloat(strings.TrimSpace(g), 64)
		if err != nil || rate <= 0 {
			return nil, fmt.Errorf("scale: --gbits %q: want positive numbers", gbits)
		}
		lat, err := time.ParseDuration(strings.TrimSpace(ls[i]))
		if err != nil || lat < 0 {
			return nil, fmt.Errorf("scale: --latency %q: want durations such as 25us", latency)
		}
		out = append(out, namedNetwork{fmt.Sprintf("%g Gbit/s, %v", rate, lat), dist.Network{Latency: lat, Bandwidth: rate * 1e9 / 8}})
	}
	return out, nil
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("scale: %q: want positive integers separated by commas", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func rateMap(s string) (map[string]float64, error) {
	out := map[string]float64{}
	if s == "" {
		return out, nil
	}
	for _, f := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(f, "=")
		r, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || r <= 0 {
			return nil, fmt.Errorf("scale: --rate %q: want name=examples_per_second,...", s)
		}
		out[strings.TrimSpace(name)] = r
	}
	return out, nil
}

// measureAllreduce times allreduces of each model's gradient size (and a
// sweep of sizes, to fit alpha and beta) between the processes mpirun
// started here; with one process there is nothing to reduce.
func measureAllreduce(c dist.Comm, models []bookModel, repeat int, stdout io.Writer) error {
	if c.Size() == 1 {
		fmt.Fprintln(stdout, "1 process: an allreduce moves nothing (0 s); run under `mpirun -np 2` to measure it between processes")
		return nil
	}
	median := func(n int) (time.Duration, error) {
		buf := make([]float32, n)
		ts := make([]time.Duration, repeat)
		for i := range ts {
			if err := c.Barrier(); err != nil {
				return 0, err
			}
			t := time.Now()
			if err := c.AllreduceFloat32(buf); err != nil {
				return 0, err
			}
			ts[i] = time.Since(t)
		}
		slices.Sort(ts)
		return ts[len(ts)/2], nil
	}
	fmt.Fprintf(stdout, "Allreduce measured between the %d processes here (median of %d):\n", c.Size(), repeat)
	for _, m := range models {
		d, err := median(m.params)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  %-20s %9d float32 (%.2f MB): %8.1f µs\n", m.name, m.params, 4*float64(m.params)/1e6, float64(d)/1e3)
	}
	var sizes []float64
	var times []time.Duration
	for n := 1 << 8; n <= 1<<22; n <<= 2 {
		d, err := median(n)
		if err != nil {
			return err
		}
		sizes, times = append(sizes, 4*float64(n)), append(times, d)
	}
	fit, err := dist.FitAlphaBeta(sizes, times)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "  fit over 1 KB to 16 MB: alpha %v, bandwidth %.2f GB/s (shared memory, a shared machine: these set no figure below)\n",
		fit.Latency.Round(100*time.Nanosecond), fit.Bandwidth/1e9)
	return nil
}
