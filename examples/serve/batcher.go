package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Predictor runs a model on a batch of inputs and returns one output per
// input, in order. Every model the server runs sits behind it: today the
// eval-tape predictors of predict.go implement it; a compiled inference
// plan (package infer, issue 34) plugs in by implementing the same method.
// Predict may be called from several goroutines at once (one per batcher
// worker), so an implementation keeps its per-call state (a tape, an
// arena) per call, not in shared fields. ctx is the batcher's: it is
// cancelled only when the server gives up draining; an implementation may
// ignore it.
type Predictor[In, Out any] interface {
	Predict(ctx context.Context, batch []In) ([]Out, error)
}

// PredictorFunc adapts a function to Predictor.
type PredictorFunc[In, Out any] func(ctx context.Context, batch []In) ([]Out, error)

// Predict calls f.
func (f PredictorFunc[In, Out]) Predict(ctx context.Context, batch []In) ([]Out, error) {
	return f(ctx, batch)
}

// BatchConfig sets a Batcher's dynamic batching.
type BatchConfig struct {
	// MaxBatch is the most requests one Predict call gets; 1 is batch-1
	// serving (each request runs alone, nothing waits).
	MaxBatch int
	// MaxWait is how long a worker holding a partial batch waits for more
	// requests before it runs what it has; the first request of a batch
	// waits at most this long for company.
	MaxWait time.Duration
	// Queue is how many requests may wait for a worker; Submit refuses
	// more with ErrQueueFull.
	Queue int
	// Workers is how many batches run at once, each on its own goroutine.
	Workers int
	// Adaptive makes a worker wait for more requests only while some
	// are on their way (announced by Expect and not yet submitted), and
	// at most MaxWait: a lone request then runs at once, and under load
	// a batch takes in the requests still being read and decoded.
	// Without it a partial batch always waits MaxWait.
	Adaptive bool
}

// Check reports a configuration that cannot batch.
func (c BatchConfig) Check() error {
	switch {
	case c.MaxBatch < 1:
		return fmt.Errorf("batcher: max batch %d, want at least 1", c.MaxBatch)
	case c.MaxWait < 0:
		return fmt.Errorf("batcher: max wait %v, want at least 0", c.MaxWait)
	case c.Queue < 1:
		return fmt.Errorf("batcher: queue %d, want at least 1", c.Queue)
	case c.Workers < 1:
		return fmt.Errorf("batcher: workers %d, want at least 1", c.Workers)
	}
	return nil
}

// ErrQueueFull is Submit's refusal when Queue requests already wait; the
// server answers it with 503 and Retry-After.
var ErrQueueFull = errors.New("batcher: queue full")

// ErrClosed is Submit's refusal after Close began, and the answer of a
// request still queued when Close's context ends; the server answers it
// with 503.
var ErrClosed = errors.New("batcher: shutting down")

// result is one request's answer.
type result[Out any] struct {
	out Out
	err error
}

// request is one queued input. state moves once from waiting to taken
// (a worker put it in a batch) or to abandoned (its caller gave up), so a
// cancelled request is never run and a running one is answered once.
type request[In, Out any] struct {
	ctx   context.Context
	in    In
	done  chan result[Out] // buffered: a worker never blocks on a caller that left
	state atomic.Int32
}

const (
	waiting int32 = iota
	taken
	abandoned
)

// Batcher collects concurrent requests into batches, up to MaxBatch or
// until MaxWait has passed since a batch's first request, runs each batch
// through a Predictor on one of Workers goroutines, and hands every
// request its own output. It is the dynamic batching of TensorFlow
// Serving's BatchingSession and Triton's dynamic batcher (max batch size,
// max queue delay, bounded queue): a request's deadline and cancellation
// are honoured while it waits, a full queue refuses at once, and Close
// answers every request it accepted.
type Batcher[In, Out any] struct {
	cfg   BatchConfig
	pred  Predictor[In, Out]
	queue chan *request[In, Out]

	mu     sync.RWMutex // guards closed against sends on a closed queue
	closed bool

	stop    context.CancelFunc // cancels runCtx: Close's deadline passed
	runCtx  context.Context
	workers sync.WaitGroup

	batches, items atomic.Int64
	arriving       atomic.Int64 // announced by Expect, not yet submitted
}

// Expect announces a request that will be submitted soon (the server
// calls it when a request's body starts to be read); the returned func
// withdraws the announcement, and must be called once the request is
// about to be submitted or has failed. Calls after the first do nothing.
// Only an Adaptive batcher waits for announced requests.
func (b *Batcher[In, Out]) Expect() (arrived func()) {
	b.arriving.Add(1)
	done := false
	return func() {
		if !done {
			done = true
			b.arriving.Add(-1)
		}
	}
}

// NewBatcher starts cfg.Workers workers that run batches through p.
func NewBatcher[In, Out any](p Predictor[In, Out], cfg BatchConfig) (*Batcher[In, Out], error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, errors.New("batcher: nil predictor")
	}
	ctx, stop := context.WithCancel(context.Background())
	b := &Batcher[In, Out]{cfg: cfg, pred: p, queue: make(chan *request[In, Out], cfg.Queue), runCtx: ctx, stop: stop}
	b.workers.Add(cfg.Workers)
	for range cfg.Workers {
		go b.work()
	}
	return b, nil
}

// Config returns the batcher's configuration.
func (b *Batcher[In, Out]) Config() BatchConfig { return b.cfg }

// Stats returns how many batches ran and how many requests they held.
func (b *Batcher[In, Out]) Stats() (batches, items int64) { return b.batches.Load(), b.items.Load() }

// Submit queues in and waits for its output. It returns ErrQueueFull at
// once when the queue is full, ErrClosed once Close has begun, ctx's error
// when ctx ends first (the request is then never run, or its output is
// dropped if its batch was already running), and otherwise the
// Predictor's output or error.
func (b *Batcher[In, Out]) Submit(ctx context.Context, in In) (Out, error) {
	var zero Out
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	r := &request[In, Out]{ctx: ctx, in: in, done: make(chan result[Out], 1)}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return zero, ErrClosed
	}
	select {
	case b.queue <- r:
		b.mu.RUnlock()
	default:
		b.mu.RUnlock()
		return zero, ErrQueueFull
	}
	select {
	case res := <-r.done:
		return res.out, res.err
	case <-ctx.Done():
		if r.state.CompareAndSwap(waiting, abandoned) {
			return zero, ctx.Err()
		}
		// A worker took it; its answer may already be there.
		select {
		case res := <-r.done:
			return res.out, res.err
		default:
			return zero, ctx.Err()
		}
	}
}

// Close stops accepting requests, lets the workers run every request
// already queued, and waits for them. If ctx ends first, the requests
// still queued are refused with ErrClosed, the context passed to running
// Predict calls is cancelled, and Close returns ctx's error once the
// workers have stopped. Close may be called more than once.
func (b *Batcher[In, Out]) Close(ctx context.Context) error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.queue)
	}
	b.mu.Unlock()
	done := make(chan struct{})
	go func() {
		b.workers.Wait()
		close(done)
	}()
	select {
	case <-done:
		b.stop()
		return nil
	case <-ctx.Done():
		b.stop()
		<-done
		return ctx.Err()
	}
}

// work is one worker: it takes a batch, runs it and answers it, until the
// queue is closed and empty.
func (b *Batcher[In, Out]) work() {
	defer b.workers.Done()
	batch := make([]*request[In, Out], 0, b.cfg.MaxBatch)
	ins := make([]In, 0, b.cfg.MaxBatch)
	var timer *time.Timer
	for {
		first, ok := <-b.queue
		if !ok {
			return
		}
		batch = batch[:0]
		if b.take(first) {
			batch = append(batch, first)
		}
		switch {
		case b.cfg.MaxBatch > 1 && b.cfg.MaxWait > 0:
			if timer == nil {
				timer = time.NewTimer(b.cfg.MaxWait)
			} else {
				timer.Reset(b.cfg.MaxWait)
			}
			batch = b.fill(batch, timer.C)
			timer.Stop()
		case b.cfg.MaxBatch > 1:
			batch = b.fill(batch, nil)
		}
		if len(batch) == 0 {
			continue
		}
		ins = ins[:0]
		for _, r := range batch {
			ins = append(ins, r.in)
		}
		b.run(batch, ins)
		clear(ins) // drop the inputs' references until the next batch
		clear(batch)
	}
}

// fill adds queued requests to batch until it holds MaxBatch, the queue
// is closed, or expired fires; with expired nil it takes only the
// requests already queued, and so does an Adaptive batcher when no
// request is on its way.
func (b *Batcher[In, Out]) fill(batch []*request[In, Out], expired <-chan time.Time) []*request[In, Out] {
	for len(batch) < b.cfg.MaxBatch {
		var r *request[In, Out]
		ok := true
		select {
		case r, ok = <-b.queue:
		default:
			if expired == nil || (b.cfg.Adaptive && b.arriving.Load() <= 0) {
				return batch
			}
			select {
			case r, ok = <-b.queue:
			case <-expired:
				return batch
			}
		}
		if !ok {
			return batch
		}
		if b.take(r) {
			batch = append(batch, r)
		}
	}
	return batch
}

// take claims r for a batch; it reports false, after answering r, when r
// was abandoned, its context has ended, or Close's deadline has passed.
func (b *Batcher[In, Out]) take(r *request[In, Out]) bool {
	if !r.state.CompareAndSwap(waiting, taken) {
		return false // its caller left and answered itself
	}
	if err := r.ctx.Err(); err != nil {
		r.done <- result[Out]{err: err}
		return false
	}
	if b.runCtx.Err() != nil {
		r.done <- result[Out]{err: ErrClosed}
		return false
	}
	return true
}

// run runs one batch and answers each of its requests. A panic in the
// Predictor, or outputs that do not match the batch, become every
// request's error: nothing escapes a worker.
func (b *Batcher[In, Out]) run(batch []*request[In, Out], ins []In) {
	outs, err := b.predict(ins)
	if err == nil && len(outs) != len(ins) {
		err = fmt.Errorf("batcher: predictor returned %d outputs for a batch of %d", len(outs), len(ins))
	}
	b.batches.Add(1)
	b.items.Add(int64(len(ins)))
	for i, r := range batch {
		if err != nil {
			r.done <- result[Out]{err: err}
			continue
		}
		r.done <- result[Out]{out: outs[i]}
	}
}

// predict calls the Predictor, turning a panic into an error.
func (b *Batcher[In, Out]) predict(ins []In) (outs []Out, err error) {
	defer func() {
		if p := recover(); p != nil {
			outs, err = nil, fmt.Errorf("batcher: predictor panicked on a batch of %d: %v", len(ins), p)
		}
	}()
	return b.pred.Predict(b.runCtx, ins)
}
