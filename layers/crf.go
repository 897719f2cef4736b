package layers

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/initializer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// CRF is a linear-chain CRF over K tags: Transitions [K, K] (tag i → tag
// j, Glorot-uniform, as Paddle's linear_chain_crf's default Xavier
// initializer) and separate Start and Stop weights [K] (zero). It takes
// emission scores per step from the layers below and is not a Layer: its
// loss needs the gold tags and its output is a decoding.
type CRF struct {
	Transitions, Start, Stop *graph.Param
}

// NewCRF returns a CRF over numTags tags whose parameters are named
// name/transitions, name/start and name/stop.
func NewCRF(name string, numTags int, rng *rand.Rand, opts ...Option) (*CRF, error) {
	c := newConfig(opts)
	if numTags <= 0 {
		return nil, fmt.Errorf("layers: crf %q: %d tags; want at least one", name, numTags)
	}
	tr, err := initializer.GlorotUniform(rng, c.dtype, numTags, numTags)
	if err != nil {
		return nil, fmt.Errorf("layers: crf %q: %w", name, err)
	}
	return &CRF{
		Transitions: graph.NewParam(name+"/transitions", tr),
		Start:       graph.NewParam(name+"/start", tensor.Zeros(c.dtype, numTags)),
		Stop:        graph.NewParam(name+"/stop", tensor.Zeros(c.dtype, numTags)),
	}, nil
}

// NegLogLikelihood returns each sequence's negative log-likelihood [B] of
// the gold tags [total] (int32 or int64) given emissions [total, K] (see
// ops.CRFOp); take graph.Mean of it for a batch loss.
func (l *CRF) NegLogLikelihood(emissions graph.Seq, tags *tensor.Tensor) *graph.Value {
	t := emissions.Values.Tape()
	if t == nil { // a nil or tapeless failed value: fail (or pass its error on) without parameters
		return graph.CRFNegLogLikelihood(emissions, nil, nil, nil, tags)
	}
	return out("crf", l, emissions.Err(), graph.CRFNegLogLikelihood(emissions, t.Param(l.Transitions), t.Param(l.Start), t.Param(l.Stop), tags))
}

// Decode returns the Viterbi best tag path of each sequence of emissions
// and its score (ops.ViterbiDecode), or the emissions' error. It decodes
// on the host: for a CRF on a device it reads host copies of the
// emissions and weights.
func (l *CRF) Decode(emissions graph.Seq) (paths [][]int, scores []float64, err error) {
	if err := emissions.Err(); err != nil {
		return nil, nil, err
	}
	if err := missing("crf", l.Transitions, l.Start, l.Stop); err != nil {
		return nil, nil, err
	}
	e, err := emissions.Values.Host() // decoding runs on the host, wherever the model is
	if err != nil {
		return nil, nil, err
	}
	w := make([]*tensor.Tensor, 3)
	for i, p := range l.Params() {
		if w[i], err = p.Value.To(nil); err != nil {
			return nil, nil, fmt.Errorf("layers: crf decode: %s: %w", p.Name, err)
		}
	}
	paths, scores, err = ops.ViterbiDecode(e, w[0], w[1], w[2], emissions.Offsets)
	if err != nil {
		return nil, nil, fmt.Errorf("layers: crf %q: %w", Name(l), err)
	}
	return paths, scores, nil
}

// Params returns the transitions, start and stop weights.
func (l *CRF) Params() []*graph.Param { return []*graph.Param{l.Transitions, l.Start, l.Stop} }
