package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plumbml/plumb/tensor"
)

// loadOptions are the flags of --loadgen.
type loadOptions struct {
	on        bool
	target    string
	endpoint  string
	input     string
	clients   string
	batches   string
	duration  time.Duration
	warmup    time.Duration
	requests  int
	rounds    int
	timeLimit time.Duration
	profile   string
}

func (l *loadOptions) flags(fs *flag.FlagSet) {
	fs.BoolVar(&l.on, "loadgen", false, "run the load generator instead of serving")
	fs.StringVar(&l.target, "target", "", "loadgen: the base URL of a running server (default: start one in-process on loopback)")
	fs.StringVar(&l.endpoint, "endpoint", "digit", "loadgen: digit or sentiment")
	fs.StringVar(&l.input, "input", "png", "loadgen: how the digit requests send their image: png (base64) or pixels (784 JSON numbers)")
	fs.StringVar(&l.clients, "clients", "1,8,64", "loadgen: the concurrent clients of each run")
	fs.StringVar(&l.batches, "batches", "64,1", "loadgen: the --max-batch of each in-process server (1: batch-1 serving)")
	fs.DurationVar(&l.duration, "duration", 10*time.Second, "loadgen: how long each run sends requests")
	fs.DurationVar(&l.warmup, "warmup", time.Second, "loadgen: unmeasured load before each run")
	fs.IntVar(&l.requests, "requests", 1_000_000, "loadgen: the most requests of one run")
	fs.IntVar(&l.rounds, "rounds", 1, "loadgen: run the --batches servers this many times, interleaved; the ratios take each one's best")
	fs.DurationVar(&l.timeLimit, "time-limit", 30*time.Minute, "loadgen: stop everything after this long")
	fs.StringVar(&l.profile, "cpuprofile", "", "loadgen: write a CPU profile of the whole run (server and clients) to this file")
}

// LoadResult is one run of the load generator.
type LoadResult struct {
	Clients    int
	Requests   int           // sent and finished (answered or failed)
	OK         int           // 200
	Status     map[int]int   // the other statuses
	ConnErrors int           // no HTTP answer (connection refused, reset, timed out)
	Elapsed    time.Duration // from the first request to the last answer
	P50, P99   time.Duration // of the 200s
}

// Errors counts the requests that did not get a 200.
func (r LoadResult) Errors() int { return r.Requests - r.OK }

// Throughput is the 200s per second.
func (r LoadResult) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// loadClient returns an HTTP client that keeps a connection per
// concurrent client alive (the default keeps 2 a host, which would
// measure connection set-up instead of serving).
func loadClient(clients int, timeout time.Duration) *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        clients,
		MaxIdleConnsPerHost: clients,
		IdleConnTimeout:     time.Minute,
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

// runLoad posts bodies in turn to url from clients goroutines, each
// sending its next request when its last is answered, until dur has
// passed, max requests have been sent or ctx ends.
func runLoad(ctx context.Context, client *http.Client, url string, bodies [][]byte, clients int, dur time.Duration, max int) LoadResult {
	res := LoadResult{Clients: clients, Status: map[int]int{}}
	if clients < 1 || len(bodies) == 0 || max < 1 {
		return res
	}
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	var sent atomic.Int64
	var mu sync.Mutex
	var lat []time.Duration
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			var mine []time.Duration
			status := map[int]int{}
			conn := 0
			for i := c; ctx.Err() == nil && sent.Add(1) <= int64(max); i += clients {
				t0 := time.Now()
				code, err := post(client, url, bodies[i%len(bodies)])
				switch {
				case err != nil:
					conn++
				case code == http.StatusOK:
					mine = append(mine, time.Since(t0))
				default:
					status[code]++
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			for k, v := range status {
				res.Status[k] += v
			}
			res.ConnErrors += conn
			mu.Unlock()
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.OK = len(lat)
	res.Requests = res.OK + res.ConnErrors
	for _, v := range res.Status {
		res.Requests += v
	}
	slices.Sort(lat)
	res.P50, res.P99 = percentile(lat, 0.50), percentile(lat, 0.99)
	return res
}

// post sends one JSON body and reads the whole answer.
func post(client *http.Client, url string, body []byte) (int, error) {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

// percentile returns the q-quantile of sorted by the nearest-rank method.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

// loadBodies returns n request bodies for the endpoint, fixed by seed:
// digit-like images (three random strokes, white on black, as 784 JSON
// numbers or a base64 PNG), or reviews of 150 to 199 words drawn from a
// small fixed list (the IMDB test set's median review is 174 words).
func loadBodies(endpoint, input string, n int, seed uint64) ([][]byte, error) {
	rng := tensor.NewRNG(seed)
	out := make([][]byte, n)
	for i := range out {
		var v any
		switch endpoint {
		case "digit":
			img := strokes(rng)
			switch input {
			case "pixels":
				px := make([]float32, Pixels)
				for j, p := range img.Pix {
					px[j] = float32(p) / 255
				}
				v = DigitRequest{Pixels: px}
			case "png":
				var b bytes.Buffer
				if err := png.Encode(&b, img); err != nil {
					return nil, err
				}
				v = DigitRequest{PNG: base64.StdEncoding.EncodeToString(b.Bytes())}
			default:
				return nil, fmt.Errorf("--input %q: want png or pixels", input)
			}
		case "sentiment":
			words := strings.Fields("the film was good bad great awful plot acting story and it i not very fun boring loved hated movie")
			text := make([]string, 150+rng.IntN(50))
			for j := range text {
				text[j] = words[rng.IntN(len(words))]
			}
			v = SentimentRequest{Text: strings.Join(text, " ")}
		default:
			return nil, fmt.Errorf("--endpoint %q: want digit or sentiment", endpoint)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// strokes draws three random strokes, two pixels wide, on a black 28×28
// image: a digit's size and sparsity, so its PNG is as small as an MNIST
// digit's.
func strokes(rng *rand.Rand) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, 28, 28))
	for range 3 {
		x0, y0 := 4+rng.Float64()*20, 4+rng.Float64()*20
		x1, y1 := 4+rng.Float64()*20, 4+rng.Float64()*20
		for s := 0.0; s <= 1; s += 1.0 / 40 {
			x, y := int(x0+s*(x1-x0)), int(y0+s*(y1-y0))
			img.SetGray(x, y, color.Gray{Y: 255})
			img.SetGray(x+1, y, color.Gray{Y: 200})
		}
	}
	return img
}

// ints parses a comma-separated list of positive integers.
func ints(flagName, s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s %q: want positive integers separated by commas", flagName, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// runLoadgen measures a server: the one at --target, or, for each
// --batches, one started in-process on loopback with that max batch and
// the other batching flags; it prints a markdown table and, when it ran
// batch 1 and a larger max batch, the throughput ratio at each client
// count.
func runLoadgen(ctx context.Context, o *options, out io.Writer) error {
	l := o.load
	ctx, cancel := context.WithTimeout(ctx, l.timeLimit)
	defer cancel()
	clients, err := ints("--clients", l.clients)
	if err != nil {
		return err
	}
	batches, err := ints("--batches", l.batches)
	if err != nil {
		return err
	}
	if l.rounds < 1 {
		return fmt.Errorf("--rounds %d: want at least 1", l.rounds)
	}
	if l.profile != "" {
		f, err := os.Create(l.profile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	bodies, err := loadBodies(l.endpoint, l.input, 64, o.seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "| server | round | max batch | workers | clients | requests | errors | req/s | p50 ms | p99 ms | mean batch | CPU ms/req |\n")
	fmt.Fprintf(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	if l.target != "" {
		for round := range l.rounds {
			if err := measure(ctx, out, l, strings.TrimSuffix(l.target, "/"), bodies, clients, "remote", round+1, 0, 0, nil, nil); err != nil {
				return err
			}
		}
		return nil
	}
	o.batch.MaxBatch = max(o.batch.MaxBatch, slices.Max(batches)) // the plan engine's largest plan
	m, err := o.loadModels()
	if err != nil {
		return err
	}
	thr := map[[2]int]float64{} // the best of the rounds
	for i := range l.rounds * len(batches) {
		round, mb := i/len(batches)+1, batches[i%len(batches)]
		cfg := o.batch
		cfg.MaxBatch = mb
		s, err := m.server(o.server, cfg, o.maxWords)
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		sctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- serveUntil(sctx, ln, s, 10*time.Second, io.Discard) }()
		name := "in-process " + m.name(l.endpoint)
		err = measure(ctx, out, l, "http://"+ln.Addr().String(), bodies, clients, name, round, mb, cfg.Workers, s, func(c int, r LoadResult) {
			k := [2]int{mb, c}
			thr[k] = max(thr[k], r.Throughput())
		})
		stop()
		if err = errors.Join(err, <-done); err != nil {
			return err
		}
	}
	if slices.Contains(batches, 1) {
		for _, mb := range batches {
			if mb == 1 {
				continue
			}
			for _, c := range clients {
				if b1 := thr[[2]int{1, c}]; b1 > 0 {
					fmt.Fprintf(out, "\n%d clients: max batch %d serves %.2fx the requests per second of batch-1 serving (best of %d rounds each)", c, mb, thr[[2]int{mb, c}]/b1, l.rounds)
				}
			}
		}
		fmt.Fprintln(out)
	}
	return ctx.Err()
}

// name is the served model's name for an endpoint.
func (m *models) name(endpoint string) string {
	if endpoint == "sentiment" {
		return m.sentInfo.Name
	}
	return m.digitInfo.Name
}

// measure runs the load at each client count against base and prints a
// row each; s, when not nil, is the in-process server whose mean batch size
// the row reports. The CPU column is the process's CPU time (getrusage)
// over the requests: with the server in-process it counts server and
// clients, and on a machine shared with other jobs it is the steadier
// figure, since a busy machine stretches the wall time but not the CPU
// time a request needs.
func measure(ctx context.Context, out io.Writer, l loadOptions, base string, bodies [][]byte, clients []int, name string, round, mb, workers int,
	s *Server, seen func(int, LoadResult)) error {
	url := base + "/v1/" + l.endpoint
	for _, c := range clients {
		client := loadClient(c, 30*time.Second)
		runLoad(ctx, client, url, bodies, c, l.warmup, l.requests)
		var b0, n0 int64
		if s != nil {
			b0, n0 = s.batchStats(l.endpoint)
		}
		cpu0, cpuOK := processCPU()
		r := runLoad(ctx, client, url, bodies, c, l.duration, l.requests)
		cpu1, _ := processCPU()
		cpu := "-"
		if cpuOK && r.Requests > 0 {
			cpu = fmt.Sprintf("%.2f", ms(cpu1-cpu0)/float64(r.Requests))
		}
		client.CloseIdleConnections()
		mean := "-"
		if s != nil {
			b1, n1 := s.batchStats(l.endpoint)
			if b1 > b0 {
				mean = fmt.Sprintf("%.1f", float64(n1-n0)/float64(b1-b0))
			}
		}
		mbs, ws := "-", "-" // a remote server's are unknown
		if s != nil {
			mbs, ws = strconv.Itoa(mb), strconv.Itoa(workers)
		}
		fmt.Fprintf(out, "| %s | %d | %s | %s | %d | %d | %d | %.0f | %.2f | %.2f | %s | %s |\n", name, round, mbs, ws, c, r.Requests, r.Errors(),
			r.Throughput(), ms(r.P50), ms(r.P99), mean, cpu)
		if r.Errors() > 0 {
			fmt.Fprintf(out, "  (errors: statuses %v, %d without an answer)\n", r.Status, r.ConnErrors)
		}
		if seen != nil {
			seen(c, r)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// batchStats returns the batches and requests run so far by the
// endpoint's batcher.
func (s *Server) batchStats(endpoint string) (batches, items int64) {
	if endpoint == "sentiment" && s.sentiment != nil {
		return s.sentiment.Batcher.Stats()
	}
	if endpoint == "digit" && s.digit != nil {
		return s.digit.Batcher.Stats()
	}
	return 0, 0
}
