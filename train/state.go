package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// state is the trainer's own progress, kept in tensors so that a
// checkpoint holds it beside the parameters and the optimizer's state,
// under names that begin "trainer/".
type state struct {
	maximize bool
	rng      *rand.PCG
	ints     *graph.Param // int64 [6]: see the i* constants
	floats   *graph.Param // float64 [2]: loss sum of the epoch, best value
	rngState *graph.Param // int64 [len(rng.MarshalBinary())], one byte each; nil without rng
}

const (
	iEpoch     = iota // epochs completed
	iStep             // steps done in the epoch after them
	iGlobal           // steps done in the run
	iExamples         // examples seen in the epoch
	iBestEpoch        // 0: none yet
	iBad              // epochs in a row without an improvement
	numInts
)

const (
	fLossSum = iota // sum of loss × examples over the epoch
	fBest
	numFloats
)

func newState(maximize bool, rng *rand.PCG) *state {
	s := &state{
		maximize: maximize,
		rng:      rng,
		ints:     graph.NewState("trainer/counters", tensor.Zeros(tensor.Int64, numInts)),
		floats:   graph.NewState("trainer/sums", tensor.Zeros(tensor.Float64, numFloats)),
	}
	s.f()[fBest] = math.Inf(1)
	if maximize {
		s.f()[fBest] = math.Inf(-1)
	}
	if rng != nil {
		b, _ := rng.MarshalBinary() // a PCG always marshals
		s.rngState = graph.NewState("trainer/rng", tensor.Zeros(tensor.Int64, len(b)))
	}
	return s
}

func (s *state) i() []int64   { return s.ints.Value.Int64s() }
func (s *state) f() []float64 { return s.floats.Value.Float64s() }

func (s *state) epoch() int         { return int(s.i()[iEpoch]) }
func (s *state) step() int          { return int(s.i()[iStep]) }
func (s *state) global() int64      { return s.i()[iGlobal] }
func (s *state) examples() int      { return int(s.i()[iExamples]) }
func (s *state) bestEpoch() int     { return int(s.i()[iBestEpoch]) }
func (s *state) bad() int           { return int(s.i()[iBad]) }
func (s *state) bestValue() float64 { return s.f()[fBest] }

// meanLoss is the epoch's mean loss so far, weighted by examples.
func (s *state) meanLoss() float64 {
	return s.f()[fLossSum] / float64(max(s.i()[iExamples], 1))
}

// add counts a step over n examples with mean loss.
func (s *state) add(loss float64, n int) {
	s.i()[iStep]++
	s.i()[iGlobal]++
	s.i()[iExamples] += int64(n)
	s.f()[fLossSum] += loss * float64(n)
}

// endEpoch records epoch e's monitored value v, resets the epoch's sums
// and says whether v improves on the best by more than minDelta.
func (s *state) endEpoch(e int, v, minDelta float64) bool {
	in, fl := s.i(), s.f()
	in[iEpoch], in[iStep], in[iExamples], fl[fLossSum] = int64(e), 0, 0, 0
	better := v < fl[fBest]-minDelta
	if s.maximize {
		better = v > fl[fBest]+minDelta
	}
	if better {
		fl[fBest], in[iBestEpoch], in[iBad] = v, int64(e), 0
	} else {
		in[iBad]++
	}
	return better
}

func (s *state) params(params []*graph.Param) []*graph.Param {
	all := append(params[:len(params):len(params)], s.ints, s.floats)
	if s.rngState != nil {
		all = append(all, s.rngState)
	}
	return all
}

// save writes params, opt's state and s to path (atomically), with meta.
func (s *state) save(path string, params []*graph.Param, opt optim.Optimizer, meta map[string]string) error {
	if s.rng != nil {
		b, _ := s.rng.MarshalBinary()
		for k, c := range b {
			s.rngState.Value.Int64s()[k] = int64(c)
		}
	}
	if err := checkpoint.SaveMeta(path, s.params(params), opt, meta); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}

// load restores params, opt's state and s from a file save wrote.
func (s *state) load(path string, params []*graph.Param, opt optim.Optimizer) error {
	if err := checkpoint.Load(path, s.params(params), opt); err != nil {
		return fmt.Errorf("train: resume: %w", err)
	}
	if s.rng != nil {
		v := s.rngState.Value.Int64s()
		b := make([]byte, len(v))
		for k, c := range v {
			b[k] = byte(c)
		}
		if err := s.rng.UnmarshalBinary(b); err != nil {
			return fmt.Errorf("train: resume from %s: the RNG state: %w", path, err)
		}
	}
	if s.epoch() < 0 || s.step() < 0 || s.examples() < 0 {
		return fmt.Errorf("train: resume from %s: epoch %d, step %d, examples %d: want none negative", path, s.epoch(), s.step(), s.examples())
	}
	return nil
}

// saveParams writes the parameters alone, for inference (checkpoint.Load
// with a nil optimizer reads them), with meta.
func saveParams(path string, params []*graph.Param, meta map[string]string) error {
	if err := checkpoint.SaveMeta(path, params, nil, meta); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	return nil
}
