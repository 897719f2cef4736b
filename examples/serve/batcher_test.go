package main

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fake is a Predictor that doubles its inputs and records every batch it
// saw. While gate is not nil, each call first reports on entered and then
// waits for gate to be closed.
type fake struct {
	mu      sync.Mutex
	batches [][]int
	entered chan struct{}
	gate    chan struct{}
	delay   time.Duration
	panics  bool
	short   bool // return one output too few
}

func (f *fake) Predict(ctx context.Context, batch []int) ([]int, error) {
	f.mu.Lock()
	f.batches = append(f.batches, slices.Clone(batch))
	f.mu.Unlock()
	if f.entered != nil {
		f.entered <- struct{}{}
	}
	if f.gate != nil {
		<-f.gate
	}
	time.Sleep(f.delay)
	if f.panics {
		panic("boom")
	}
	out := make([]int, len(batch))
	for i, v := range batch {
		out[i] = 2 * v
	}
	if f.short {
		out = out[1:]
	}
	return out, nil
}

// sizes returns the sizes of the batches seen, and every input seen.
func (f *fake) sizes() (sizes, inputs []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.batches {
		sizes = append(sizes, len(b))
		inputs = append(inputs, b...)
	}
	return sizes, inputs
}

func newBatcher(t *testing.T, f *fake, cfg BatchConfig) *Batcher[int, int] {
	t.Helper()
	b, err := NewBatcher[int, int](f, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, b.Close(ctx))
	})
	return b
}

// submitAll submits 0..n-1 concurrently and returns each one's output
// and error.
func submitAll(b *Batcher[int, int], n int) ([]int, []error) {
	outs, errs := make([]int, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { outs[i], errs[i] = b.Submit(context.Background(), i) })
	}
	wg.Wait()
	return outs, errs
}

func TestBatcherGroupsConcurrentRequests(t *testing.T) {
	for _, tc := range []struct {
		name          string
		maxBatch, n   int
		wantBatches   []int // the exact sizes, when the wait outlasts the test
		wantMaxOfSize int
	}{
		{"one full batch", 8, 8, []int{8}, 8},
		{"full batches and a partial one held until the wait ends", 8, 20, nil, 8},
		{"batch-1 serving", 1, 10, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{}
			// A long wait: a batch runs early only because it is full.
			b := newBatcher(t, f, BatchConfig{MaxBatch: tc.maxBatch, MaxWait: 300 * time.Millisecond, Queue: 64, Workers: 1})
			outs, errs := submitAll(b, tc.n)
			for i := range tc.n {
				require.NoError(t, errs[i])
				assert.Equal(t, 2*i, outs[i], "request %d got another request's output", i)
			}
			sizes, inputs := f.sizes()
			if tc.wantBatches != nil {
				assert.Equal(t, tc.wantBatches, sizes)
			}
			assert.LessOrEqual(t, slices.Max(sizes), tc.wantMaxOfSize)
			slices.Sort(inputs)
			assert.Equal(t, tc.n, len(inputs), "every request runs exactly once")
			for i, v := range inputs {
				assert.Equal(t, i, v)
			}
			nb, items := b.Stats()
			assert.Equal(t, int64(len(sizes)), nb)
			assert.Equal(t, int64(tc.n), items)
			if tc.n == 20 {
				// 20 = 8 + 8 + 4: at most 3 batches once requests are
				// all queued before the first batch fills.
				assert.GreaterOrEqual(t, len(sizes), 3)
				assert.Contains(t, sizes, 8, "concurrent requests were grouped")
			}
		})
	}
}

func TestBatcherMaxWait(t *testing.T) {
	for _, tc := range []struct {
		name        string
		maxBatch    int
		wait        time.Duration
		atLeast     time.Duration
		lessThan    time.Duration
		wantBatches []int
	}{
		{"a lone request waits max wait for company", 16, 80 * time.Millisecond, 80 * time.Millisecond, 2 * time.Second, []int{1}},
		{"batch 1 never waits", 1, 5 * time.Second, 0, 2 * time.Second, []int{1}},
		{"no wait takes only what is queued", 16, 0, 0, 2 * time.Second, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{}
			b := newBatcher(t, f, BatchConfig{MaxBatch: tc.maxBatch, MaxWait: tc.wait, Queue: 4, Workers: 1})
			start := time.Now()
			out, err := b.Submit(context.Background(), 21)
			took := time.Since(start)
			require.NoError(t, err)
			assert.Equal(t, 42, out)
			assert.GreaterOrEqual(t, took, tc.atLeast)
			assert.Less(t, took, tc.lessThan)
			sizes, _ := f.sizes()
			assert.Equal(t, tc.wantBatches, sizes)
		})
	}
}

func TestBatcherAdaptiveWait(t *testing.T) {
	t.Run("a lone request runs at once", func(t *testing.T) {
		f := &fake{}
		b := newBatcher(t, f, BatchConfig{MaxBatch: 16, MaxWait: 5 * time.Second, Queue: 4, Workers: 1, Adaptive: true})
		start := time.Now()
		out, err := b.Submit(context.Background(), 1)
		require.NoError(t, err)
		assert.Equal(t, 2, out)
		assert.Less(t, time.Since(start), 2*time.Second)
	})
	t.Run("a batch waits for a request on its way", func(t *testing.T) {
		f := &fake{}
		b := newBatcher(t, f, BatchConfig{MaxBatch: 16, MaxWait: 5 * time.Second, Queue: 4, Workers: 1, Adaptive: true})
		arrived := b.Expect()
		first := make(chan error, 1)
		go func() {
			_, err := b.Submit(context.Background(), 1)
			first <- err
		}()
		// By now the worker holds request 1 and waits for the announced
		// one (were it not there yet, both would be queued together).
		time.Sleep(20 * time.Millisecond)
		arrived()
		arrived() // a second call does nothing
		out, err := b.Submit(context.Background(), 2)
		require.NoError(t, err)
		assert.Equal(t, 4, out)
		require.NoError(t, <-first)
		sizes, _ := f.sizes()
		assert.Equal(t, []int{2}, sizes, "one batch: the first request waited for the announced one")
		assert.Zero(t, b.arriving.Load())
	})
	t.Run("a withdrawn announcement ends the wait at max wait", func(t *testing.T) {
		f := &fake{}
		b := newBatcher(t, f, BatchConfig{MaxBatch: 16, MaxWait: 50 * time.Millisecond, Queue: 4, Workers: 1, Adaptive: true})
		arrived := b.Expect()
		time.AfterFunc(10*time.Millisecond, arrived) // a request that failed to decode
		start := time.Now()
		_, err := b.Submit(context.Background(), 1)
		require.NoError(t, err)
		assert.Less(t, time.Since(start), 2*time.Second)
	})
}

// blocked returns a batcher of one worker and max batch 1 whose worker
// holds request 0 inside Predict until the returned release is called.
func blocked(t *testing.T, queue int) (*Batcher[int, int], *fake, func(), chan error) {
	t.Helper()
	f := &fake{entered: make(chan struct{}, 100), gate: make(chan struct{})}
	b := newBatcher(t, f, BatchConfig{MaxBatch: 1, Queue: queue, Workers: 1})
	first := make(chan error, 1)
	go func() {
		_, err := b.Submit(context.Background(), 0)
		first <- err
	}()
	<-f.entered
	var once sync.Once
	release := func() { once.Do(func() { close(f.gate) }) }
	t.Cleanup(release)
	return b, f, release, first
}

// waitQueued waits until n requests are queued.
func waitQueued(t *testing.T, b *Batcher[int, int], n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(b.queue) == n }, 5*time.Second, time.Millisecond)
}

// queueUp submits 1..n from their own goroutines, waits until all n are
// queued, and returns the channel of their errors.
func queueUp(t *testing.T, b *Batcher[int, int], n int) chan error {
	t.Helper()
	results := make(chan error, n)
	for i := 1; i <= n; i++ {
		go func() {
			_, err := b.Submit(context.Background(), i)
			results <- err
		}()
	}
	waitQueued(t, b, n)
	return results
}

func TestBatcherQueueFull(t *testing.T) {
	b, f, release, first := blocked(t, 2)
	results := queueUp(t, b, 2)
	_, err := b.Submit(context.Background(), 3)
	assert.ErrorIs(t, err, ErrQueueFull)
	release()
	require.NoError(t, <-first)
	require.NoError(t, <-results)
	require.NoError(t, <-results)
	_, inputs := f.sizes()
	slices.Sort(inputs)
	assert.Equal(t, []int{0, 1, 2}, inputs, "the refused request never runs")
}

func TestBatcherCancellation(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"cancelled while queued", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(30*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
		{"deadline passes while queued", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 30*time.Millisecond)
		}, context.DeadlineExceeded},
		{"cancelled before submitting", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, f, release, first := blocked(t, 4)
			ctx, cancel := tc.ctx()
			defer cancel()
			start := time.Now()
			_, err := b.Submit(ctx, 7)
			assert.ErrorIs(t, err, tc.want)
			assert.Less(t, time.Since(start), 2*time.Second, "Submit returns when its context ends, not when the worker frees")
			release()
			require.NoError(t, <-first)
			// A request behind the cancelled one still runs, and the
			// cancelled one never does.
			out, err := b.Submit(context.Background(), 8)
			require.NoError(t, err)
			assert.Equal(t, 16, out)
			_, inputs := f.sizes()
			assert.NotContains(t, inputs, 7)
		})
	}
}

func TestBatcherCancelledWhileRunning(t *testing.T) {
	b, _, release, first := blocked(t, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := b.Submit(ctx, 5)
		done <- err
	}()
	waitQueued(t, b, 1)
	release()
	require.NoError(t, <-first)
	cancel()
	err := <-done
	// Either it ran before the cancel or the caller left first; it is
	// never left without an answer.
	if err != nil {
		assert.ErrorIs(t, err, context.Canceled)
	}
}

func TestBatcherPredictorFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    *fake
		want string
	}{
		{"a panic is every request's error", &fake{panics: true}, "predictor panicked on a batch of"},
		{"outputs that do not match the batch", &fake{short: true}, "returned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBatcher(t, tc.f, BatchConfig{MaxBatch: 4, MaxWait: 20 * time.Millisecond, Queue: 16, Workers: 2})
			_, errs := submitAll(b, 6)
			for _, err := range errs {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
			}
			tc.f.mu.Lock()
			tc.f.panics, tc.f.short = false, false
			tc.f.mu.Unlock()
			out, err := b.Submit(context.Background(), 3)
			require.NoError(t, err, "the workers survive a failed batch")
			assert.Equal(t, 6, out)
		})
	}
}

func TestBatcherCloseDrainsAcceptedRequests(t *testing.T) {
	b, f, release, first := blocked(t, 8)
	results := queueUp(t, b, 5)
	closed := make(chan error, 1)
	go func() { closed <- b.Close(context.Background()) }()
	require.Eventually(t, func() bool {
		b.mu.RLock()
		defer b.mu.RUnlock()
		return b.closed
	}, 5*time.Second, time.Millisecond)
	_, err := b.Submit(context.Background(), 99)
	assert.ErrorIs(t, err, ErrClosed, "Submit refuses once Close began")
	release()
	require.NoError(t, <-first)
	for range 5 {
		assert.NoError(t, <-results, "a request accepted before Close is run")
	}
	require.NoError(t, <-closed)
	_, inputs := f.sizes()
	assert.Len(t, inputs, 6)
	assert.NotContains(t, inputs, 99)
}

func TestBatcherCloseDeadlineRefusesQueued(t *testing.T) {
	b, f, release, first := blocked(t, 8)
	results := queueUp(t, b, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	time.AfterFunc(60*time.Millisecond, release) // the running batch outlasts the deadline
	assert.ErrorIs(t, b.Close(ctx), context.DeadlineExceeded)
	require.NoError(t, <-first, "the batch that was running finishes")
	for range 3 {
		assert.ErrorIs(t, <-results, ErrClosed)
	}
	_, inputs := f.sizes()
	assert.Equal(t, []int{0}, inputs)
	assert.NoError(t, b.Close(context.Background()), "Close again")
}

func TestBatchConfigCheck(t *testing.T) {
	ok := BatchConfig{MaxBatch: 1, Queue: 1, Workers: 1}
	require.NoError(t, ok.Check())
	for _, tc := range []struct {
		name string
		edit func(*BatchConfig)
		want string
	}{
		{"max batch", func(c *BatchConfig) { c.MaxBatch = 0 }, "max batch 0"},
		{"wait", func(c *BatchConfig) { c.MaxWait = -1 }, "max wait -1ns"},
		{"queue", func(c *BatchConfig) { c.Queue = 0 }, "queue 0"},
		{"workers", func(c *BatchConfig) { c.Workers = -2 }, "workers -2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			_, err := NewBatcher[int, int](&fake{}, c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := NewBatcher[int, int](nil, ok)
	assert.ErrorContains(t, err, "nil predictor")
}
