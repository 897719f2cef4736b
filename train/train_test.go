package train

import (
	"bytes"
	"errors"
	"iter"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// pair is a batch of a regression problem: y = x·[1, -2] + 0.5.
type pair struct{ x, y *tensor.Tensor }

// regression is a Source of n examples in batches of size, shuffled by
// epoch: batch order depends only on (seed, epoch).
type regression struct {
	n, size int
	seed    uint64
	fail    int // yield an error as batch fail of every epoch (0: never)
}

func (r regression) Len() int { return r.n }

func (r regression) Batches(epoch int) iter.Seq2[pair, error] {
	return func(yield func(pair, error) bool) {
		rng := rand.New(rand.NewPCG(r.seed, uint64(epoch)))
		for i, from := 1, 0; from < r.n; i, from = i+1, from+r.size {
			if i == r.fail {
				yield(pair{}, errors.New("disk on fire"))
				return
			}
			m := min(r.size, r.n-from)
			x := tensor.Zeros(tensor.Float64, m, 2)
			y := tensor.Zeros(tensor.Float64, m, 1)
			xs, ys := x.Float64s(), y.Float64s()
			for k := range m {
				xs[2*k], xs[2*k+1] = rng.NormFloat64(), rng.NormFloat64()
				ys[k] = xs[2*k] - 2*xs[2*k+1] + 0.5
			}
			if !yield(pair{x, y}, nil) {
				return
			}
		}
	}
}

// setup is a linear model, its SGD optimizer and a loss that drops the
// inputs at random (rate 0.1) from rng, so a resumed run needs rng's state.
type setup struct {
	net *layers.Linear
	opt optim.Optimizer
	rng *rand.PCG
}

func newSetup(t *testing.T, lr optim.Schedule) *setup {
	net, err := layers.NewLinear("lin", 2, 1, tensor.NewRNG(3), layers.DType(tensor.Float64))
	require.NoError(t, err)
	if lr == nil {
		lr, err = optim.Constant(0.05)
		require.NoError(t, err)
	}
	opt, err := optim.NewSGD(net.Params(), optim.LRSchedule(lr))
	require.NoError(t, err)
	return &setup{net: net, opt: opt, rng: rand.NewPCG(7, 8)}
}

func (s *setup) loss(t *graph.Tape, b pair) (*graph.Value, int) {
	x := graph.Dropout(t.Const(b.x), 0.1, rand.New(s.rng))
	return graph.MSE(s.net.Forward(x), t.Const(b.y)), b.x.Dim(0)
}

func (s *setup) config(src Source[pair], epochs int) Config[pair] {
	return Config[pair]{Params: s.net.Params(), Optimizer: s.opt, Train: src, Loss: s.loss, Epochs: epochs, RNG: s.rng}
}

func (s *setup) weights() []float64 {
	var w []float64
	for _, p := range s.net.Params() {
		w = append(w, p.Value.Float64s()...)
	}
	return w
}

func TestRunLearnsAndReports(t *testing.T) {
	s := newSetup(t, nil)
	cfg := s.config(regression{n: 200, size: 16, seed: 1}, 5)
	steps, epochs, evals := 0, 0, 0
	var progress []Progress
	cfg.Progress = func(p Progress) { progress = append(progress, p) }
	cfg.Evaluate = func(report func(done, total int)) (Metrics, error) {
		evals++
		report(50, 100)
		report(100, 100)
		return Metrics{"rmse": math.Sqrt(mse(s))}, nil
	}
	cfg.Monitor = "rmse"
	cfg.Hooks = []Hooks{{
		Step: func(st Step) error {
			steps++
			assert.Equal(t, int64(steps), st.GlobalStep)
			assert.LessOrEqual(t, st.Examples, 16)
			return nil
		},
		Epoch: func(e Epoch) error { epochs++; return nil },
	}}
	res, err := Run(cfg)
	require.NoError(t, err)
	assert.Equal(t, 5*13, steps) // 200 examples in batches of 16: 12 full and one of 8
	assert.Equal(t, 5, epochs)
	assert.Equal(t, 5, evals)
	require.Len(t, res.Epochs, 5)
	assert.Less(t, res.Epochs[4].TrainLoss, res.Epochs[0].TrainLoss/4)
	assert.Less(t, res.Best, 0.4)
	assert.Equal(t, res.Best, res.Epochs[res.BestEpoch-1].Metrics["rmse"])
	assert.Empty(t, res.Stopped)
	last := progress[len(progress)-1]
	assert.Equal(t, Progress{Phase: Evaluating, Epoch: 5, Epochs: 5, Done: 100, Total: 100}, Progress{
		Phase: last.Phase, Epoch: last.Epoch, Epochs: last.Epochs, Done: last.Done, Total: last.Total})
	assert.Equal(t, 200, progress[12].Done) // the last training report of epoch 1
	assert.Equal(t, Training, progress[12].Phase)
}

// mse is the model's mean squared error on fixed data, without dropout.
func mse(s *setup) float64 {
	tape := graph.NewEvalTape()
	for b := range (regression{n: 100, size: 100, seed: 99}).Batches(1) {
		l, _ := graph.MSE(s.net.Forward(tape.Const(b.x)), tape.Const(b.y)).Item()
		return l
	}
	return 0
}

// A run stopped by a hook and resumed from its state file ends with the
// same weights, bit for bit, as a run that was never interrupted: same
// data order, same dropout draws, same optimizer state.
func TestResumeGivesTheUninterruptedRun(t *testing.T) {
	src := regression{n: 100, size: 16, seed: 5} // 7 batches an epoch
	sched, err := optim.ExponentialDecay(0.05, 3, 0.9, false)
	require.NoError(t, err)
	whole := newSetup(t, sched)
	_, err = Run(whole.config(src, 3))
	require.NoError(t, err)

	for _, stopAt := range []int64{3, 7, 10, 20} { // mid-epoch, at an epoch's end, ...
		dir := t.TempDir()
		state := filepath.Join(dir, "state.safetensors")
		first := newSetup(t, sched)
		cfg := first.config(src, 3)
		cfg.StatePath = state
		cfg.Hooks = []Hooks{{Step: func(st Step) error {
			if st.GlobalStep == stopAt {
				return ErrStop
			}
			return nil
		}}}
		res, err := Run(cfg)
		require.NoError(t, err)
		assert.Equal(t, "a hook asked to stop", res.Stopped)

		second := newSetup(t, sched)
		second.rng.Seed(1, 1) // overwritten by the resume
		cfg = second.config(src, 3)
		cfg.ResumeFrom = state
		steps := 0
		cfg.Hooks = []Hooks{{Step: func(st Step) error { steps++; return nil }}}
		_, err = Run(cfg)
		require.NoError(t, err)
		assert.Equal(t, 21-int(stopAt), steps, "stop at %d", stopAt)
		assert.Equal(t, whole.weights(), second.weights(), "stop at %d", stopAt)
	}
}

func TestNonFiniteLossStopsWithoutSaving(t *testing.T) {
	dir := t.TempDir()
	best, state := filepath.Join(dir, "best.safetensors"), filepath.Join(dir, "state.safetensors")
	s := newSetup(t, nil)
	cfg := s.config(regression{n: 64, size: 16, seed: 2}, 3)
	cfg.BestPath, cfg.StatePath = best, state
	calls := 0
	good := cfg.Loss
	var before []float64
	cfg.Loss = func(t *graph.Tape, b pair) (*graph.Value, int) {
		calls++
		if calls == 4+3 { // epoch 2, step 3
			before = s.weights()
			return graph.Div(graph.MSE(t.Const(b.y), t.Const(b.y)), t.Const(tensor.Scalar(0.0))), 16
		}
		return good(t, b)
	}
	bestInfo, err := os.Stat(best) // not written yet
	require.Error(t, err)
	_, err = Run(cfg)
	require.ErrorIs(t, err, ErrNonFinite)
	assert.Contains(t, err.Error(), "epoch 2 step 3")
	assert.Equal(t, before, s.weights(), "the non-finite step was applied")
	bestInfo, err = os.Stat(best)
	require.NoError(t, err) // epoch 1's
	// the state file is epoch 1's too: resuming from it restarts epoch 2
	fresh := newSetup(t, nil)
	st := newState(false, fresh.rng)
	require.NoError(t, checkpoint.Load(state, st.params(fresh.net.Params()), fresh.opt))
	assert.Equal(t, 1, st.epoch())
	assert.Equal(t, 0, st.step())
	assert.Positive(t, bestInfo.Size())
}

func TestEarlyStoppingAndBestCheckpoint(t *testing.T) {
	tests := []struct {
		name      string
		maximize  bool
		values    []float64
		patience  int
		ran, best int
		stopped   bool
	}{
		{"accuracy stalls", true, []float64{0.5, 0.6, 0.6, 0.55, 0.7}, 2, 4, 2, true},
		{"accuracy improves late", true, []float64{0.5, 0.6, 0.6, 0.7, 0.65}, 2, 5, 4, false},
		{"loss falls", false, []float64{3, 2, 1, 0.5, 0.4}, 1, 5, 5, false},
		{"loss rises", false, []float64{3, 4, 5, 6, 7}, 1, 2, 1, true},
		{"no patience", false, []float64{3, 4, 5, 6, 7}, 0, 5, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := newSetup(t, nil)
			cfg := s.config(regression{n: 32, size: 16, seed: 2}, 5)
			cfg.Monitor, cfg.Maximize, cfg.Patience = "score", tc.maximize, tc.patience
			cfg.BestPath = filepath.Join(dir, "best.safetensors")
			var saved [][]float64 // the weights after each epoch
			cfg.Evaluate = func(func(int, int)) (Metrics, error) {
				saved = append(saved, s.weights())
				return Metrics{"score": tc.values[len(saved)-1]}, nil
			}
			res, err := Run(cfg)
			require.NoError(t, err)
			assert.Len(t, res.Epochs, tc.ran)
			assert.Equal(t, tc.best, res.BestEpoch)
			assert.Equal(t, tc.values[tc.best-1], res.Best)
			assert.Equal(t, tc.stopped, strings.HasPrefix(res.Stopped, "early stopping: score did not improve"), res.Stopped)
			fresh := newSetup(t, nil)
			require.NoError(t, checkpoint.Load(cfg.BestPath, fresh.net.Params(), nil))
			assert.Equal(t, saved[tc.best-1], fresh.weights())
		})
	}
}

func TestLRPerBatchAndPerEpoch(t *testing.T) {
	sched, err := optim.PiecewiseConstant([]int64{0, 1}, []float64{0.1, 0.01, 0.001})
	require.NoError(t, err)
	tests := []struct {
		name string
		lr   *LR
		want []float64 // per step: 3 epochs of 2 steps
	}{
		{"per batch", PerBatch(sched), []float64{0.1, 0.01, 0.001, 0.001, 0.001, 0.001}},
		{"per epoch", PerEpoch(sched), []float64{0.1, 0.1, 0.01, 0.01, 0.001, 0.001}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, tc.lr)
			cfg := s.config(regression{n: 32, size: 16, seed: 2}, 3)
			cfg.LR = tc.lr
			var got []float64
			cfg.Hooks = []Hooks{{Step: func(st Step) error { got = append(got, st.LR); return nil }}}
			_, err := Run(cfg)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		edit func(*Config[pair])
		want string
	}{
		{"no epochs", func(c *Config[pair]) { c.Epochs = 0 }, "Epochs=0 must be positive"},
		{"no optimizer", func(c *Config[pair]) { c.Optimizer = nil }, "no Optimizer"},
		{"no loss", func(c *Config[pair]) { c.Loss = nil }, "no Loss"},
		{"no source", func(c *Config[pair]) { c.Train = nil }, "no Train source"},
		{"negative patience", func(c *Config[pair]) { c.Patience = -1 }, "Patience=-1"},
		{"metric without evaluator", func(c *Config[pair]) { c.Monitor = "accuracy" }, `Monitor "accuracy" names an evaluator metric`},
		{"best path in a missing directory", func(c *Config[pair]) { c.BestPath = filepath.Join(dir, "no", "best") }, "cannot write checkpoints to"},
		{"state path is a directory", func(c *Config[pair]) { c.StatePath = dir }, "it is a directory"},
		{"resume from a missing file", func(c *Config[pair]) { c.ResumeFrom = filepath.Join(dir, "none") }, "train: resume"},
		{"unknown monitored metric", func(c *Config[pair]) {
			c.Monitor = "f1"
			c.Evaluate = func(func(int, int)) (Metrics, error) { return Metrics{"accuracy": 1}, nil }
		}, `Monitor "f1" is not among the evaluator's metrics [accuracy]`},
		{"evaluator fails", func(c *Config[pair]) {
			c.Evaluate = func(func(int, int)) (Metrics, error) { return nil, errors.New("no test set") }
		}, "epoch 1: evaluate: no test set"},
		{"source fails", func(c *Config[pair]) { c.Train = regression{n: 64, size: 16, fail: 2} }, "epoch 1 batch 2: disk on fire"},
		{"no examples", func(c *Config[pair]) {
			c.Loss = func(t *graph.Tape, b pair) (*graph.Value, int) { return graph.MSE(t.Const(b.y), t.Const(b.y)), 0 }
		}, "epoch 1 step 1: the loss function says the batch holds 0 examples"},
		{"shape error", func(c *Config[pair]) {
			c.Loss = func(t *graph.Tape, b pair) (*graph.Value, int) { return graph.MSE(t.Const(b.x), t.Const(b.y)), 1 }
		}, "epoch 1 step 1: "},
		{"hook fails", func(c *Config[pair]) {
			c.Hooks = []Hooks{{Epoch: func(Epoch) error { return errors.New("log full") }}}
		}, "log full"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := newSetup(t, nil).config(regression{n: 64, size: 16, seed: 1}, 2)
			tc.edit(&cfg)
			_, err := Run(cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestBarPlainLines(t *testing.T) {
	var out bytes.Buffer
	b := NewBar(&out)
	for d := 10; d <= 100; d += 10 {
		b.Update(Progress{Phase: Training, Epoch: 1, Epochs: 2, Done: d, Total: 100, Loss: 0.5, SamplesPerSec: 1000})
	}
	b.Update(Progress{Phase: Evaluating, Epoch: 1, Epochs: 2, Done: 100, Total: 100, SamplesPerSec: 5000})
	b.Clear()
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 11)
	assert.Equal(t, "epoch 1/2 [===                           ] 10/100  1000 samples/s  loss 0.5000  ETA 0s", lines[0])
	assert.Equal(t, "evaluating epoch 1/2 [==============================] 100/100  5000 samples/s  ETA 0s", lines[10])
}
