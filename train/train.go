// Package train is the training loop that every model shares: batches from
// any Source, a loss built on a tape, an optimizer step, a learning-rate
// schedule, evaluation after each epoch, progress, checkpoints of the best
// epoch, resumption, early stopping, a stop on a non-finite loss, and
// hooks. A model supplies only its loss and its evaluator:
//
//	res, err := train.Run(train.Config[*data.Batch]{
//		Params:    net.Params(),
//		Optimizer: opt,
//		Train:     loader,
//		Loss: func(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
//			return graph.SoftmaxCrossEntropy(net.Forward(t.Const(b.X)), b.Y), b.Len()
//		},
//		Evaluate: evaluator, // returns named metrics, e.g. {"accuracy": 0.98}
//		Monitor:  "accuracy", Maximize: true, BestPath: "best.safetensors",
//		Epochs:   10,
//	})
//
// One tape serves every batch and is released after each step
// (graph.Tape.Release), so a step reuses the previous step's memory.
//
// Concurrency: Run trains one model on the calling goroutine, and its
// hooks, progress callback and evaluator run there too; a Bar and the
// run log's Writer (LogTo) are not safe for concurrent use. Two Runs may
// go on at once on different models; two Runs (or any two goroutines)
// training one model are refused with an error naming a parameter by
// graph and optim, not left to race (see graph's package doc). To train
// one model on several cores or machines, use Replicas, which gives each
// rank its own copy and averages the gradients.
package train

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// LossFunc builds the loss of batch b on tape t: a scalar value (the
// batch's mean loss) and the number of examples in b, which weighs the
// batch in the epoch's mean loss and counts towards samples per second.
type LossFunc[B any] func(t *graph.Tape, b B) (loss *graph.Value, examples int)

// Metrics are named measurements, such as {"accuracy": 0.98, "loss": 0.05}.
type Metrics map[string]float64

// Evaluator measures the model after an epoch and returns named metrics.
// It calls report(done, total) as it goes (examples evaluated, and how
// many there are), so the trainer can show progress while it evaluates.
type Evaluator func(report func(done, total int)) (Metrics, error)

// Phase says what a Progress report is about.
type Phase string

// The phases of an epoch.
const (
	Training   Phase = "train"
	Evaluating Phase = "eval"
)

// Progress is reported after every training batch and as the evaluator
// reports.
type Progress struct {
	Phase         Phase
	Epoch, Epochs int
	Done, Total   int           // examples done in this phase, and how many there are
	Loss          float64       // running mean training loss of the epoch (training)
	SamplesPerSec float64       // of this phase so far
	ETA           time.Duration // until the end of this phase
}

// Step describes one optimizer step, for hooks.
type Step struct {
	Epoch         int     // 1-based
	Step          int     // 1-based, within the epoch
	GlobalStep    int64   // steps since the run began, counting those before a resume
	Examples      int     // in this batch
	Loss          float64 // of this batch
	MeanLoss      float64 // of the epoch so far, weighted by examples
	LR            float64 // the learning rate of this step (0 without Config.LR)
	SamplesPerSec float64 // of the epoch so far
	Elapsed       time.Duration
	Seen, Total   int // examples done in the epoch so far (a resumed epoch's included), and in a whole epoch
}

// Epoch describes one finished epoch, for hooks and the Result.
type Epoch struct {
	Epoch         int
	TrainLoss     float64 // mean over the epoch's examples
	Metrics       Metrics // the evaluator's (nil without one)
	SamplesPerSec float64 // training throughput
	LR            float64 // the learning rate of the epoch's last step
	Duration      time.Duration
	EvalDuration  time.Duration
	Best          bool // the monitored value improved (the best checkpoint was written)
	Elapsed       time.Duration
}

// Hooks run after every step and after every epoch (after its checkpoints
// are written). A hook that returns ErrStop ends the run there without an
// error; any other error ends it with that error. End runs once when the
// run ends, however it ends (finished, stopped, interrupted, failed), so a
// log can be closed with the reason.
type Hooks struct {
	Step  func(Step) error
	Epoch func(Epoch) error
	End   func(End)
}

// ErrStop, returned by a hook, ends the run early and cleanly.
var ErrStop = errors.New("train: stop requested")

// ErrNonFinite is wrapped by the error of a run stopped by a NaN or
// infinite loss.
var ErrNonFinite = errors.New("non-finite loss")

// TrainLoss is the name under which Monitor selects the epoch's mean
// training loss.
const TrainLoss = "train_loss"

// Config is one training run.
type Config[B any] struct {
	Params    []*graph.Param // every parameter of the model (trainable or not): what checkpoints hold
	Optimizer optim.Optimizer
	Train     Source[B]
	Loss      LossFunc[B]
	Epochs    int // the run ends after this many epochs (counting those before a resume)

	// Evaluate, if set, runs after every epoch.
	Evaluate Evaluator
	// LR, if set, is the schedule the optimizer follows; the trainer
	// steps it per epoch (PerEpoch) and reports the rate of each step.
	LR *LR

	// Monitor names the value that decides the best epoch and early
	// stopping: one of the evaluator's metrics, or TrainLoss (the
	// default). Maximize says that higher is better (accuracy, F1, BLEU).
	Monitor  string
	Maximize bool
	// MinDelta is the least change of the monitored value that counts as
	// an improvement.
	MinDelta float64
	// Patience > 0 stops the run after that many epochs in a row without
	// an improvement (early stopping).
	Patience int

	// BestPath, if set, receives the parameters (checkpoint.Save, without
	// optimizer state) after every epoch that improves the monitored value.
	BestPath string
	// StatePath, if set, receives everything a resumed run needs after
	// every epoch, every SaveEvery steps (if > 0) and when a hook stops
	// the run: parameters, optimizer state, the epoch and step reached,
	// the epoch's running loss, early stopping's record and RNG's state.
	StatePath string
	SaveEvery int
	// ResumeFrom, if set, is a StatePath file to continue from: the run
	// goes on at the step after the one saved, with the same data order.
	ResumeFrom string
	// RNG, if set, is the generator of the model's randomness (dropout,
	// augmentation); its state is saved and restored with the run.
	RNG *rand.PCG

	// Progress, if set, is called after every training batch and while
	// evaluating; see Bar for a terminal progress bar.
	Progress func(Progress)
	Hooks    []Hooks

	// Replicas, if set, makes the run data-parallel over several
	// processes (package dist); see Replicas for what changes.
	Replicas Replicas

	// Device, if set, is where the model's parameters are: the trainer
	// moves each batch there (MoveBatch, the fields named in HostFields
	// left on the host) before Loss sees it, so that a model never moves
	// its own batches. B must be Movable.
	Device     tensor.Device
	HostFields []string

	// Meta, if set, is written into every checkpoint the run writes
	// (BestPath and StatePath, by checkpoint.SaveMeta): what a program
	// needs to rebuild the model a file holds.
	Meta map[string]string

	// Interrupt, if set, asks the run to stop: once it is closed (or
	// receives), the run finishes the step it is in, saves StatePath and
	// returns an error wrapping ErrInterrupted (see interrupt.go).
	Interrupt <-chan struct{}
	// Unit names the examples ("images", "reviews", "target words") in
	// the Report's lines and the Bar's rate; "" is "samples".
	Unit string
	// Report, if set, shows the run on it as Keras's fit does: a progress
	// bar (unless Progress is set) and one line per epoch with the
	// training loss and every metric (EpochLine).
	Report io.Writer
}

// Result is what a run did.
type Result struct {
	Epochs    []Epoch // the epochs this call ran (not those before a resume)
	BestEpoch int     // 0 when no epoch finished
	Best      float64 // the monitored value at BestEpoch
	Stopped   string  // why the run ended before Config.Epochs, or ""
}

func (c *Config[B]) check() error {
	var errs []string
	if c.Optimizer == nil {
		errs = append(errs, "no Optimizer")
	}
	if c.Train == nil {
		errs = append(errs, "no Train source")
	}
	if c.Loss == nil {
		errs = append(errs, "no Loss")
	}
	if c.Epochs <= 0 {
		errs = append(errs, fmt.Sprintf("Epochs=%d must be positive", c.Epochs))
	}
	if c.Patience < 0 || c.SaveEvery < 0 || c.MinDelta < 0 {
		errs = append(errs, fmt.Sprintf("Patience=%d, SaveEvery=%d and MinDelta=%v must not be negative", c.Patience, c.SaveEvery, c.MinDelta))
	}
	if c.Device != nil {
		if err := checkMovable[B](); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if c.Monitor != "" && c.Monitor != TrainLoss && c.Evaluate == nil {
		errs = append(errs, fmt.Sprintf("Monitor %q names an evaluator metric but there is no Evaluate", c.Monitor))
	}
	for i, p := range c.Params {
		if p == nil {
			errs = append(errs, fmt.Sprintf("parameter %d is nil", i))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("train: %s", strings.Join(errs, "; "))
	}
	for _, p := range []string{c.BestPath, c.StatePath} {
		if p != "" && (c.Replicas == nil || c.Replicas.Rank() == 0) { // only rank 0 writes
			if err := checkpoint.CheckPath(p); err != nil {
				return fmt.Errorf("train: %w", err)
			}
		}
	}
	return nil
}

// Run trains as cfg says and returns what happened. A failed step stops the
// run with an error naming the epoch and step; a non-finite loss stops it
// before the optimizer applies the step's gradients and writes no
// checkpoint, so the files on disk hold the last good state.
func Run[B any](cfg Config[B]) (Result, error) {
	if cfg.Monitor == "" {
		cfg.Monitor = TrainLoss
	}
	if err := cfg.check(); err != nil {
		return Result{}, err
	}
	r := &run[B]{cfg: cfg, tape: graph.NewTape(), began: time.Now(), st: newState(cfg.Maximize, cfg.RNG)}
	r.iterations = iterations(cfg.Optimizer)
	if cfg.ResumeFrom != "" {
		if err := r.st.load(cfg.ResumeFrom, cfg.Params, cfg.Optimizer); err != nil {
			return Result{}, err
		}
	}
	if err := r.replicate(); err != nil {
		return Result{}, err
	}
	r.report()
	err := r.loop()
	if errors.Is(err, ErrStop) {
		err = nil
		if r.res.Stopped == "" {
			r.res.Stopped = "a hook asked to stop"
		}
	}
	r.res.BestEpoch, r.res.Best = r.st.bestEpoch(), r.st.bestValue()
	r.end(err)
	return r.res, err
}

// run is the state of one Run.
type run[B any] struct {
	cfg        Config[B]
	tape       *graph.Tape
	began      time.Time
	st         *state
	iterations *graph.Param // the optimizer's step count, when it has one
	lastLR     float64      // the learning rate of the last step
	res        Result
	leader     bool // rank 0, or the only process: reports, evaluates and saves
	crossed    bool // the step's forward pass summed across the replicas
}

// replicate prepares a data-parallel run (Config.Replicas): this rank's
// shard of the data, and rank 0's parameters, optimizer state and
// progress on every rank.
func (r *run[B]) replicate() error {
	rp := r.cfg.Replicas
	r.leader = rp == nil || rp.Rank() == 0
	if rp == nil {
		return nil
	}
	src, err := sharded(r.cfg.Train, rp)
	if err != nil {
		return err
	}
	r.cfg.Train = src
	if rp.Size() > 1 {
		r.tape.SetCrossReplica(func(buf []float64) error {
			r.crossed = true
			return rp.SumAcross(buf)
		})
	}
	all := append(r.cfg.Params[:len(r.cfg.Params):len(r.cfg.Params)], r.cfg.Optimizer.State()...)
	if err := rp.SyncParams(append(all, r.st.ints, r.st.floats)); err != nil {
		return fmt.Errorf("train: starting from rank 0's parameters: %w", err)
	}
	return nil
}

func (r *run[B]) loop() error {
	for e := r.st.epoch() + 1; e <= r.cfg.Epochs; e++ {
		ep, err := r.epoch(e)
		if err != nil {
			return err
		}
		r.res.Epochs = append(r.res.Epochs, ep)
		if err := r.hooks(func(h Hooks) error {
			if h.Epoch == nil {
				return nil
			}
			return h.Epoch(ep)
		}); err != nil {
			return err
		}
		if e < r.cfg.Epochs && r.interrupted() { // between epochs: the epoch's state is saved
			return r.stopInterrupted(e, 0)
		}
		if r.cfg.Patience > 0 && r.st.bad() >= r.cfg.Patience && e < r.cfg.Epochs {
			r.res.Stopped = fmt.Sprintf("early stopping: %s did not improve for %d epochs (best %.6g at epoch %d)",
				r.cfg.Monitor, r.st.bad(), r.st.bestValue(), r.st.bestEpoch())
			return nil
		}
	}
	return nil
}

// epoch trains epoch e (from the step the state says, after a resume),
// evaluates, and writes the checkpoints.
func (r *run[B]) epoch(e int) (Epoch, error) {
	cfg := &r.cfg
	cfg.LR.startEpoch(e)
	skip := r.st.step()
	start := time.Now()
	done, total := 0, cfg.Train.Len()
	if cfg.Replicas != nil {
		total *= cfg.Replicas.Size()
	}
	lr, i := 0.0, 0
	for b, err := range cfg.Train.Batches(e - 1) {
		i++
		if err != nil {
			return Epoch{}, fmt.Errorf("train: epoch %d, batch %d: %w", e, i, err)
		}
		if i <= skip { // resumed mid-epoch: these were trained before
			continue
		}
		loss, n, err := r.step(e, i, b)
		if err != nil {
			return Epoch{}, err
		}
		lr = r.lastLR
		r.st.add(loss, n)
		done += n
		el := time.Since(start)
		rate := float64(done) / el.Seconds()
		if cfg.Progress != nil && r.leader {
			seen := r.st.examples()
			cfg.Progress(Progress{Phase: Training, Epoch: e, Epochs: cfg.Epochs, Done: seen, Total: total,
				Loss: r.st.meanLoss(), SamplesPerSec: rate, ETA: eta(total-seen, rate)})
		}
		s := Step{Epoch: e, Step: i, GlobalStep: r.st.global(), Examples: n, Loss: loss, MeanLoss: r.st.meanLoss(),
			LR: lr, SamplesPerSec: rate, Elapsed: time.Since(r.began), Seen: r.st.examples(), Total: total}
		hookErr := r.hooks(func(h Hooks) error {
			if h.Step == nil {
				return nil
			}
			return h.Step(s)
		})
		if errors.Is(hookErr, ErrInterrupted) { // InterruptHooks
			if !r.interruptible() {
				hookErr = nil
			} else {
				return Epoch{}, r.stopInterrupted(e, i)
			}
		}
		if hookErr != nil && !errors.Is(hookErr, ErrStop) {
			return Epoch{}, hookErr
		}
		if hookErr != nil || (cfg.SaveEvery > 0 && r.st.global()%int64(cfg.SaveEvery) == 0) {
			if err := r.saveState(); err != nil {
				return Epoch{}, err
			}
		}
		if hookErr != nil {
			return Epoch{}, hookErr
		}
		if r.interrupted() {
			return Epoch{}, r.stopInterrupted(e, i)
		}
	}
	if i < skip {
		return Epoch{}, fmt.Errorf("train: epoch %d has %d batches, but the run resumed after batch %d of it", e, i, skip)
	}
	dur := time.Since(start)
	ep := Epoch{Epoch: e, TrainLoss: r.st.meanLoss(), SamplesPerSec: float64(done) / dur.Seconds(), LR: lr, Duration: dur}
	if cfg.Replicas != nil {
		if err := cfg.Replicas.AverageState(cfg.Params); err != nil {
			return Epoch{}, fmt.Errorf("train: epoch %d: averaging the ranks' state: %w", e, err)
		}
	}
	if cfg.Evaluate != nil {
		es := time.Now()
		eval := func() (Metrics, error) {
			return cfg.Evaluate(func(d, t int) {
				if cfg.Progress != nil && r.leader {
					rate := float64(d) / time.Since(es).Seconds()
					cfg.Progress(Progress{Phase: Evaluating, Epoch: e, Epochs: cfg.Epochs, Done: d, Total: t,
						SamplesPerSec: rate, ETA: eta(t-d, rate)})
				}
			})
		}
		var m Metrics
		var err error
		if cfg.Replicas != nil {
			m, err = shareEvaluation(cfg.Replicas, eval)
		} else {
			m, err = eval()
		}
		if err != nil {
			return Epoch{}, fmt.Errorf("train: epoch %d: evaluate: %w", e, err)
		}
		ep.Metrics, ep.EvalDuration = m, time.Since(es)
	}
	v, err := monitored(cfg.Monitor, ep)
	if err != nil {
		return Epoch{}, err
	}
	ep.Best = r.st.endEpoch(e, v, cfg.MinDelta)
	if ep.Best && cfg.BestPath != "" && r.leader {
		if err := saveParams(cfg.BestPath, cfg.Params, cfg.Meta); err != nil {
			return Epoch{}, err
		}
	}
	if err := r.saveState(); err != nil {
		return Epoch{}, err
	}
	ep.Elapsed = time.Since(r.began)
	return ep, nil
}

// step trains on batch i of epoch e and returns its loss and examples.
func (r *run[B]) step(e, i int, b B) (float64, int, error) {
	defer r.tape.Release()
	r.crossed = false
	b, err := MoveBatch(r.tape, r.cfg.Device, b, r.cfg.HostFields...)
	if err != nil {
		return 0, 0, fmt.Errorf("train: epoch %d, step %d: %w", e, i, err)
	}
	lv, n := r.cfg.Loss(r.tape, b)
	if lv == nil {
		return 0, 0, fmt.Errorf("train: epoch %d, step %d: the loss function returned no value", e, i)
	}
	loss, err := lv.Item()
	if err != nil {
		return 0, 0, fmt.Errorf("train: epoch %d, step %d: %w", e, i, err)
	}
	if n <= 0 {
		return 0, 0, fmt.Errorf("train: epoch %d, step %d: the loss function says the batch holds %d examples; want at least 1", e, i, n)
	}
	if rp := r.cfg.Replicas; rp != nil { // every rank must reach the allreduce, whatever its loss
		// A non-finite loss has no gradient (Backward refuses it), and
		// the mean loss, non-finite too, stops every rank below. A rank
		// with one skips Backward, unless the backward pass sums across
		// the replicas (synchronised batch norm), which every rank must
		// reach: then the ranks first agree whether any has one, and none
		// runs it. Without such sums the step meets the other ranks once,
		// so none waits twice for a slower one.
		bad := []float64{0}
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			bad[0] = 1
		}
		if r.crossed {
			if err := rp.SumAcross(bad); err != nil {
				return 0, 0, fmt.Errorf("train: epoch %d, step %d: %w", e, i, err)
			}
		}
		if bad[0] == 0 {
			if err := r.tape.Backward(lv); err != nil {
				return 0, 0, fmt.Errorf("train: epoch %d, step %d: %w", e, i, err)
			}
		}
		if loss, n, err = rp.AverageGradients(r.cfg.Params, loss, n); err != nil {
			return 0, 0, fmt.Errorf("train: epoch %d, step %d: averaging gradients: %w", e, i, err)
		}
	}
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return 0, 0, fmt.Errorf("train: epoch %d, step %d: loss is %v (%w): the run diverged (lower the learning rate?) or the data holds NaN or Inf; stopped before the step, no checkpoint written",
			e, i, loss, ErrNonFinite)
	}
	r.lastLR = r.rate()
	if r.cfg.Replicas == nil {
		if err := r.tape.Backward(lv); err != nil {
			return 0, 0, fmt.Errorf("train: epoch %d, step %d: %w", e, i, err)
		}
	}
	if err := r.cfg.Optimizer.Step(); err != nil {
		return 0, 0, fmt.Errorf("train: epoch %d, step %d: %w", e, i, err)
	}
	return loss, n, nil
}

// hooks calls f on every hook set in order and returns the first error.
func (r *run[B]) hooks(f func(Hooks) error) error {
	for _, h := range r.cfg.Hooks {
		if err := f(h); err != nil {
			return err
		}
	}
	return nil
}

// rate is the learning rate the optimizer's next step uses: Config.LR at
// the optimizer's step count (0 without a schedule).
func (r *run[B]) rate() float64 {
	if r.cfg.LR == nil {
		return 0
	}
	var n int64
	if r.iterations != nil {
		n = r.iterations.Value.Int64s()[0]
	}
	return r.cfg.LR.LR(n)
}

func (r *run[B]) saveState() error {
	if r.cfg.StatePath == "" || !r.leader {
		return nil
	}
	return r.st.save(r.cfg.StatePath, r.cfg.Params, r.cfg.Optimizer, r.cfg.Meta)
}

// iterations returns the optimizer's int64 step count ("iterations" in its
// State, as every optim optimizer has), or nil.
func iterations(opt optim.Optimizer) *graph.Param {
	for _, p := range opt.State() {
		if p != nil && p.Name == "iterations" && p.Value != nil && p.Value.Size() == 1 && p.Value.DType() == tensor.Int64 {
			return p
		}
	}
	return nil
}

// monitored returns the value of the metric called name in ep.
func monitored(name string, ep Epoch) (float64, error) {
	if name == TrainLoss {
		return ep.TrainLoss, nil
	}
	v, ok := ep.Metrics[name]
	if !ok {
		names := make([]string, 0, len(ep.Metrics))
		for k := range ep.Metrics {
			names = append(names, k)
		}
		slices.Sort(names)
		return 0, fmt.Errorf("train: epoch %d: Monitor %q is not among the evaluator's metrics %v (nor %q)", ep.Epoch, name, names, TrainLoss)
	}
	return v, nil
}

// eta is the time left for left examples at rate examples per second.
func eta(left int, rate float64) time.Duration {
	if !(rate > 0) || left <= 0 {
		return 0
	}
	return time.Duration(float64(left) / rate * float64(time.Second))
}
