// Command serve is an HTTP inference server for Plumb models, with dynamic
// batching, and its load generator.
//
// It serves the MNIST classifier of models/mnist (CNN or MLP) and the
// sentiment classifier of models/sentiment (text CNN or stacked LSTM),
// loaded from checkpoints written by plumb train --save:
//
//	go run ./examples/serve --digit cnn --digit-ckpt cnn.safetensors \
//	    --sentiment cnn --sentiment-ckpt sent.safetensors --imdb ../shared/data/imdb
//
//	curl -s localhost:8080/v1/digit -d '{"pixels": [0, 0, ..., 0]}'
//	curl -s localhost:8080/v1/sentiment -d '{"text": "A fine, moving film."}'
//
// --fresh serves freshly initialised models (seed --seed) for load tests;
// every answer and /healthz then carry a warning. The sentiment model
// needs the vocabulary it was trained with: --vocab FILE (one word a
// line, as data.Vocab.Save writes; --write-vocab writes one) or --imdb
// DIR, which rebuilds the book's dictionary from the reviews exactly as
// plumb train sentiment does.
//
// --engine plan (the default) runs the MNIST classifier on compiled
// inference plans (package infer; DigitPlanPredictor), one per power-of-two
// batch size; --engine tape runs it on eval tapes. The sentiment model
// runs on eval tapes either way: a plan holds for one ragged batch's
// offsets, and every batch of reviews brings new ones.
//
// Requests are batched (Batcher): up to --max-batch requests, or what
// arrived within --max-wait of a batch's first request, run as one
// forward pass; with --adaptive (the default) a batch waits only while
// more requests are being read. --max-batch 1 is batch-1 serving. SIGINT or SIGTERM
// drains: /readyz turns 503, no new connection is accepted, every request
// already accepted is answered, and requests still queued after --drain
// are refused with 503.
//
// With --loadgen, the command instead runs the server in-process on
// loopback and measures it (loadgen.go): throughput and p50/p99 latency
// for 1, 8 and 64 concurrent clients, with dynamic batching and with
// batch-1 serving.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/tensor"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}

// options are the command line's flags.
type options struct {
	addr                     string
	digit, digitCkpt         string
	sent, sentCkpt           string
	vocab, imdbDir, outVocab string
	fresh                    bool
	seed                     uint64
	batch                    BatchConfig
	server                   ServerConfig
	drain                    time.Duration
	maxWords                 int
	engine                   string
	load                     loadOptions
}

func parse(args []string, stderr io.Writer) (*options, error) {
	o := &options{server: DefaultServerConfig()}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "localhost:8080", "listen on this address")
	fs.StringVar(&o.digit, "digit", "cnn", "MNIST classifier: cnn, mlp, or none")
	fs.StringVar(&o.digitCkpt, "digit-ckpt", "", "its checkpoint, written by plumb train mnist --save (same --model)")
	fs.StringVar(&o.sent, "sentiment", "none", "sentiment classifier: cnn, lstm, or none")
	fs.StringVar(&o.sentCkpt, "sentiment-ckpt", "", "its checkpoint, written by plumb train sentiment --save (same --model)")
	fs.StringVar(&o.vocab, "vocab", "", "the sentiment model's vocabulary: one word a line, <unk> among them")
	fs.StringVar(&o.imdbDir, "imdb", "", "rebuild the sentiment vocabulary from this aclImdb folder (or .tar.gz), as plumb train sentiment does")
	fs.StringVar(&o.outVocab, "write-vocab", "", "write the sentiment vocabulary to this file (for --vocab next time) and go on")
	fs.BoolVar(&o.fresh, "fresh", false, "serve freshly initialised models (seed --seed) instead of checkpoints: for load tests only")
	fs.Uint64Var(&o.seed, "seed", 1, "the seed of --fresh")
	fs.IntVar(&o.batch.MaxBatch, "max-batch", 64, "the most requests in one batch (1: batch-1 serving)")
	fs.DurationVar(&o.batch.MaxWait, "max-wait", 5*time.Millisecond, "how long a batch's first request waits for more")
	fs.BoolVar(&o.batch.Adaptive, "adaptive", true, "wait for more requests only while some are being read (a lone request runs at once)")
	fs.IntVar(&o.batch.Queue, "queue", 1024, "requests that may wait; more are refused with 503")
	fs.IntVar(&o.batch.Workers, "workers", 1, "batches run at once")
	fs.Int64Var(&o.server.MaxBody, "max-body", o.server.MaxBody, "the largest request body, in bytes (413 above)")
	fs.DurationVar(&o.server.Timeout, "timeout", o.server.Timeout, "each request's deadline (504 past it)")
	fs.StringVar(&o.engine, "engine", "plan", "how the MNIST classifier runs: plan (compiled inference plans, package infer) or tape (eval tapes); the sentiment model always runs on tapes")
	fs.IntVar(&o.maxWords, "max-words", 2500, "the longest review, in words (400 above; the longest IMDB review has 2,469)")
	fs.DurationVar(&o.drain, "drain", 30*time.Second, "on SIGINT/SIGTERM, how long to finish the requests in flight")
	o.load.flags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := o.batch.Check(); err != nil {
		return nil, err
	}
	if o.engine != "plan" && o.engine != "tape" {
		return nil, fmt.Errorf("--engine %q: want plan or tape", o.engine)
	}
	return o, nil
}

// run is the command: it serves until ctx ends, or runs the load
// generator.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	if o.load.on {
		return runLoadgen(ctx, o, stdout)
	}
	s, err := o.newServer(o.batch)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "serving on http://%s (max batch %d, max wait %v, queue %d, workers %d)\n",
		ln.Addr(), o.batch.MaxBatch, o.batch.MaxWait, o.batch.Queue, o.batch.Workers)
	return serveUntil(ctx, ln, s, o.drain, stdout)
}

// models holds the loaded networks, which every batcher configuration of
// the load generator shares.
type models struct {
	digit     Predictor[[]float32, Prediction]
	digitInfo ModelInfo
	sent      *SentimentPredictor
	sentInfo  ModelInfo
}

// loadModels builds and loads the models the options name.
func (o *options) loadModels() (*models, error) {
	m := &models{}
	if o.digit != "none" {
		net, err := mnist.New(o.digit, tensor.NewRNG(o.seed))
		if err != nil {
			return nil, fmt.Errorf("--digit: %w", err)
		}
		if m.digitInfo, err = o.weights("mnist-"+o.digit, o.digitCkpt, "--digit-ckpt", "plumb train mnist --model "+o.digit, net.Params); err != nil {
			return nil, err
		}
		if o.engine == "plan" {
			m.digit, err = NewDigitPlanPredictor(net, o.batch.MaxBatch)
		} else {
			m.digit, err = NewDigitPredictor(net)
		}
		if err != nil {
			return nil, err
		}
	}
	if o.sent != "none" {
		v, err := o.vocabulary()
		if err != nil {
			return nil, err
		}
		net, err := sentiment.New(o.sent, v.Len(), tensor.NewRNG(o.seed))
		if err != nil {
			return nil, fmt.Errorf("--sentiment: %w", err)
		}
		if m.sentInfo, err = o.weights("sentiment-"+o.sent, o.sentCkpt, "--sentiment-ckpt", "plumb train sentiment --model "+o.sent, net.Params); err != nil {
			return nil, err
		}
		if m.sent, err = NewSentimentPredictor(net, v); err != nil {
			return nil, err
		}
	}
	if m.digit == nil && m.sent == nil {
		return nil, errors.New("--digit none and --sentiment none: nothing to serve")
	}
	return m, nil
}

// weights loads ckpt into the parameters, or with --fresh keeps the
// seeded initialisation.
func (o *options) weights(name, ckpt, flagName, trainer string, params func() []*graph.Param) (ModelInfo, error) {
	switch {
	case ckpt != "" && o.fresh:
		return ModelInfo{}, fmt.Errorf("%s and --fresh: give one", flagName)
	case o.fresh:
		return ModelInfo{Name: name, Weights: "fresh", Fresh: true, Seed: o.seed}, nil
	case ckpt == "":
		return ModelInfo{}, fmt.Errorf("%s FILE (written by %s --save) is required, or --fresh for untrained weights", flagName, trainer)
	}
	if err := checkpoint.Load(ckpt, params(), nil); err != nil {
		return ModelInfo{}, fmt.Errorf("%s: %w", flagName, err)
	}
	return ModelInfo{Name: name, Weights: ckpt}, nil
}

// vocabulary reads --vocab or rebuilds it from --imdb, and writes it to
// --write-vocab.
func (o *options) vocabulary() (*data.Vocab, error) {
	var v *data.Vocab
	switch {
	case o.vocab != "" && o.imdbDir != "":
		return nil, errors.New("--vocab and --imdb: give one")
	case o.vocab != "":
		f, err := os.Open(o.vocab)
		if err != nil {
			return nil, fmt.Errorf("--vocab: %w", err)
		}
		defer f.Close()
		if v, err = data.LoadVocab(f, o.vocab, data.Unk); err != nil {
			return nil, fmt.Errorf("--vocab: %w", err)
		}
	case o.imdbDir != "":
		d, err := sentiment.Load(o.imdbDir)
		if err != nil {
			return nil, fmt.Errorf("--imdb: %w", err)
		}
		v = d.Vocab
	default:
		return nil, errors.New("--sentiment needs its vocabulary: --vocab FILE or --imdb DIR")
	}
	if o.outVocab != "" {
		f, err := os.Create(o.outVocab)
		if err != nil {
			return nil, fmt.Errorf("--write-vocab: %w", err)
		}
		if err := errors.Join(v.Save(f), f.Close()); err != nil {
			return nil, fmt.Errorf("--write-vocab: %w", err)
		}
	}
	return v, nil
}

// newServer loads the models and puts batchers of cfg in front of them.
func (o *options) newServer(cfg BatchConfig) (*Server, error) {
	m, err := o.loadModels()
	if err != nil {
		return nil, err
	}
	return m.server(o.server, cfg, o.maxWords)
}

// server starts one batcher of cfg for each model and the Server on top;
// maxWords is the sentiment model's longest review.
func (m *models) server(scfg ServerConfig, cfg BatchConfig, maxWords int) (*Server, error) {
	var dm *DigitModel
	var sm *SentimentModel
	if m.digit != nil {
		b, err := NewBatcher[[]float32, Prediction](m.digit, cfg)
		if err != nil {
			return nil, err
		}
		dm = &DigitModel{Info: m.digitInfo, Batcher: b}
	}
	if m.sent != nil {
		b, err := NewBatcher[[]int64, Prediction](m.sent, cfg)
		if err != nil {
			return nil, err
		}
		sm = &SentimentModel{Info: m.sentInfo, Encode: m.sent.Encode, Batcher: b, MaxWords: maxWords}
	}
	return NewServer(scfg, dm, sm)
}

// serveUntil serves s on ln until ctx ends, then drains: /readyz turns
// 503, http.Server.Shutdown stops accepting connections and waits for the
// handlers, and Server.Drain closes the batchers (refusing, after drain,
// what is still queued) and waits for every handler to have answered.
func serveUntil(ctx context.Context, ln net.Listener, s *Server, drain time.Duration, log io.Writer) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      s.cfg.Timeout + 10*time.Second,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    16 << 10,
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		return errors.Join(err, s.Drain(context.Background()))
	case <-ctx.Done():
	}
	fmt.Fprintf(log, "draining (up to %v)\n", drain)
	s.BeginDrain()
	dctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := hs.Shutdown(dctx)
	err = errors.Join(err, s.Drain(dctx))
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	resp := s.Responses()
	fmt.Fprintf(log, "stopped: responses by status %v\n", resp)
	return err
}
