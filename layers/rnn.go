package layers

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/initializer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// RNNConfig shapes a recurrent layer: LSTM, GRU and ProjectedLSTM.
type RNNConfig struct {
	// In is the features read per step; Units the hidden units per
	// direction (the per-step output is Units wide, 2·Units bidirectional).
	In, Units int
	// Layers is the number of stacked layers (0 means 1); layer l+1 reads
	// layer l's per-step outputs.
	Layers int
	// Bidirectional runs a forward and a reverse recurrence per layer and
	// concatenates their per-step outputs [forward, reverse] (Keras
	// Bidirectional with merge_mode="concat"; both are aligned with the
	// input steps).
	Bidirectional bool
	// Reverse runs a single-direction layer from each sequence's last step
	// to its first (Keras go_backwards, Paddle's is_reverse), with each
	// step's output at its input's row, so no sequence is reversed before
	// or after; its parameters are named .../bw/... A stack that
	// alternates directions (the Paddle book's stacked LSTM) is one such
	// layer per direction. It cannot be combined with Bidirectional.
	Reverse bool
	// Peepholes adds the LSTM's diagonal peephole weights (LSTM only).
	Peepholes bool
	// Candidate and Cell are the LSTM's candidate and cell-output
	// activations (LSTM only; tanh when zero; see ops.LSTMAttrs).
	Candidate, Cell ops.RNNActivation
	// ResetAfter selects Keras' reset_after=True GRU (GRU only; TF2's
	// default is true, here the zero value is false, so set it).
	ResetAfter bool
}

func (c RNNConfig) layers() int { return max(c.Layers, 1) }

// dir is the direction that the layer's direction d runs: 1 (reverse)
// for the second of a bidirectional pair or for a Reverse layer.
func (c RNNConfig) dir(d int) int {
	if c.Reverse {
		return 1
	}
	return d
}

func (c RNNConfig) dirs() int {
	if c.Bidirectional {
		return 2
	}
	return 1
}

// checkInit returns a failed value when n initial states (given says
// whether any were passed) do not match the layers × directions, else nil.
// It also checks that the layer holds weights for them all (have, its
// layers' directions), which a zero LSTM{} or GRU{} does not.
func (c RNNConfig) checkInit(kind string, x graph.Seq, n int, given bool, have []int) *graph.Value {
	if err := x.Err(); err != nil {
		return x.Values.Tape().Fail(fmt.Errorf("layers: %s: %w", kind, err))
	}
	if len(have) != c.layers() || slices.ContainsFunc(have, func(d int) bool { return d != c.dirs() }) {
		return x.Values.Tape().Fail(fmt.Errorf("layers: %s: weights for %v directions per layer, want %d layers of %d (build it with New%s)",
			kind, have, c.layers(), c.dirs(), strings.ToUpper(kind)))
	}
	if want := c.layers() * c.dirs(); given && n != want {
		return x.Values.Tape().Fail(fmt.Errorf("layers: %s: %d initial states for %d layers × directions", kind, n, want))
	}
	return nil
}

// dirsPerLayer lists how many directions of weights each layer holds.
func dirsPerLayer[P any](w [][]P) []int {
	n := make([]int, len(w))
	for i, d := range w {
		n[i] = len(d)
	}
	return n
}

// checkRNN validates a recurrent layer's sizes.
func checkRNN(kind, name string, cfg RNNConfig) error {
	if cfg.In <= 0 || cfg.Units <= 0 || cfg.Layers < 0 {
		return fmt.Errorf("layers: %s %q: sizes in=%d units=%d and layers=%d must be positive", kind, name, cfg.In, cfg.Units, cfg.Layers)
	}
	if cfg.Reverse && cfg.Bidirectional {
		return fmt.Errorf("layers: %s %q: Reverse and Bidirectional together; a bidirectional layer runs both directions", kind, name)
	}
	return nil
}

// rnnName names the parameters of one layer and direction: name/l0/fw/...
func rnnName(name string, l, d int) string {
	return fmt.Sprintf("%s/l%d/%s", name, l, [2]string{"fw", "bw"}[d])
}

// stackRNN runs nl layers of nd directions over x: run(x, l, d, init)
// runs direction d (1 = reverse) of layer l from init (the zero S for
// none) and returns its per-step outputs and final state. It returns the
// last layer's outputs and every final state, layer-major.
func stackRNN[S any](x graph.Seq, nl, nd int, init []S, run func(x graph.Seq, l, d int, init S) (graph.Seq, S)) (graph.Seq, []S) {
	var finals []S
	for l := 0; l < nl; l++ {
		outs := make([]*graph.Value, nd)
		for d := 0; d < nd; d++ {
			var s S
			if init != nil {
				s = init[l*nd+d]
			}
			y, f := run(x, l, d, s)
			outs[d] = y.Values
			finals = append(finals, f)
		}
		x = x.With(outs[0])
		if nd == 2 {
			x = x.With(graph.Concat(1, outs...))
		}
	}
	return x, finals
}

// LSTM is a stacked, optionally bidirectional LSTM layer over ragged
// batches (Keras LSTM; gate order i, f, c, o and the formulas of
// ops.LSTMOp). Per layer and direction: kernel W [in, 4H] Glorot-uniform,
// recurrent kernel U [H, 4H] orthogonal, bias [4H] zero but for the forget
// gate's block, 1 (Keras' unit_forget_bias=True), and with Peepholes a
// zero peephole [3H].
type LSTM struct {
	Units int
	cfg   RNNConfig
	W     [][]LSTMParams // [layer][direction]
}

// LSTMParams are one LSTM direction's parameters; P is nil without peepholes.
type LSTMParams struct{ W, U, B, P *graph.Param }

// Weights puts the parameters on the tape.
func (p LSTMParams) Weights(t *graph.Tape) graph.LSTMWeights {
	w := graph.LSTMWeights{W: t.Param(p.W), U: t.Param(p.U), B: t.Param(p.B)}
	if p.P != nil {
		w.Peephole = t.Param(p.P)
	}
	return w
}

// Params returns W, U, B and, with peepholes, P.
func (p LSTMParams) Params() []*graph.Param {
	if p.P == nil {
		return []*graph.Param{p.W, p.U, p.B}
	}
	return []*graph.Param{p.W, p.U, p.B, p.P}
}

func newLSTMParams(name string, in, units int, peep bool, rng *rand.Rand, dt tensor.DType) (LSTMParams, error) {
	w, err := initializer.GlorotUniform(rng, dt, in, 4*units)
	if err != nil {
		return LSTMParams{}, err
	}
	u, err := initializer.Orthogonal(rng, dt, units, 4*units)
	if err != nil {
		return LSTMParams{}, err
	}
	b := tensor.Zeros(dt, 4*units)
	for k := units; k < 2*units; k++ {
		b.SetAt(k, 1) // unit_forget_bias
	}
	p := LSTMParams{W: graph.NewParam(name+"/kernel", w), U: graph.NewParam(name+"/recurrent_kernel", u), B: graph.NewParam(name+"/bias", b)}
	if peep {
		p.P = graph.NewParam(name+"/peephole", tensor.Zeros(dt, 3*units))
	}
	return p, nil
}

// NewLSTM returns an LSTM layer reading cfg.In features per step with
// cfg.Units hidden units; parameters are named
// name/l<layer>/<fw|bw>/kernel, recurrent_kernel, bias (and peephole).
func NewLSTM(name string, cfg RNNConfig, rng *rand.Rand, opts ...Option) (*LSTM, error) {
	if err := checkRNN("lstm", name, cfg); err != nil {
		return nil, err
	}
	c := newConfig(opts)
	in, units := cfg.In, cfg.Units
	l := &LSTM{Units: units, cfg: cfg}
	for i := 0; i < cfg.layers(); i++ {
		var dirs []LSTMParams
		for d := 0; d < cfg.dirs(); d++ {
			p, err := newLSTMParams(rnnName(name, i, cfg.dir(d)), in, units, cfg.Peepholes, rng, c.dtype)
			if err != nil {
				return nil, fmt.Errorf("layers: lstm %q: %w", name, err)
			}
			dirs = append(dirs, p)
		}
		l.W = append(l.W, dirs)
		in = units * cfg.dirs()
	}
	return l, nil
}

// Run returns the last layer's per-step outputs ([total, H], or [total,
// 2H] bidirectional) and every layer's and direction's final state,
// layer-major (forward before reverse). init holds as many initial states
// in that order, or is nil for zeros.
func (l *LSTM) Run(x graph.Seq, init []graph.LSTMState) (graph.Seq, []graph.LSTMState) {
	if v := l.cfg.checkInit("lstm", x, len(init), init != nil, dirsPerLayer(l.W)); v != nil {
		return x.With(v), []graph.LSTMState{{H: v, C: v}}
	}
	y, states := stackRNN(x, l.cfg.layers(), l.cfg.dirs(), init, func(x graph.Seq, i, d int, s graph.LSTMState) (graph.Seq, graph.LSTMState) {
		var sp *graph.LSTMState
		if s.H != nil {
			sp = &s
		}
		w := l.W[i][d].Weights(x.Values.Tape())
		w.Candidate, w.Cell = l.cfg.Candidate, l.cfg.Cell
		return graph.LSTM(x, w, sp, l.cfg.dir(d) == 1)
	})
	return outSeq("lstm", l, x.Values.Err(), y), states
}

// Forward returns the last layer's output at every step (Keras
// return_sequences=True).
func (l *LSTM) Forward(x graph.Seq) graph.Seq {
	y, _ := l.Run(x, nil)
	return y
}

// Final returns the last layer's final hidden state [B, H] (concatenated
// forward and reverse, [B, 2H], when bidirectional; Keras'
// return_sequences=False output).
func (l *LSTM) Final(x graph.Seq) *graph.Value {
	_, f := l.Run(x, nil)
	hs := make([]*graph.Value, 0, 2)
	for _, s := range f[len(f)-l.cfg.dirs():] {
		hs = append(hs, s.H)
	}
	return concatLast(hs)
}

// Params returns every layer's parameters.
func (l *LSTM) Params() []*graph.Param {
	var ms Modules
	for _, dirs := range l.W {
		ms = append(ms, List(dirs))
	}
	return ms.Params()
}

// concatLast concatenates one or two [B, H] states along the features.
func concatLast(hs []*graph.Value) *graph.Value {
	if len(hs) == 1 {
		return hs[0]
	}
	return graph.Concat(1, hs...)
}

// GRU is a stacked, optionally bidirectional GRU layer over ragged batches
// (Keras GRU; gate order z, r, h̃ and the formulas of ops.GRUOp). Per layer
// and direction: kernel W [in, 3H] Glorot-uniform, recurrent kernel U [H,
// 3H] orthogonal, bias zero, [2, 3H] with ResetAfter and [3H] without.
type GRU struct {
	Units int
	cfg   RNNConfig
	W     [][]GRUParams // [layer][direction]
}

// GRUParams are one GRU direction's parameters.
type GRUParams struct {
	W, U, B    *graph.Param
	ResetAfter bool
}

// Params returns W, U and B.
func (p GRUParams) Params() []*graph.Param { return []*graph.Param{p.W, p.U, p.B} }

// Weights puts the parameters on the tape.
func (p GRUParams) Weights(t *graph.Tape) graph.GRUWeights {
	return graph.GRUWeights{W: t.Param(p.W), U: t.Param(p.U), B: t.Param(p.B), ResetAfter: p.ResetAfter}
}

// NewGRU returns a GRU layer shaped by cfg; parameters are named as
// NewLSTM's.
func NewGRU(name string, cfg RNNConfig, rng *rand.Rand, opts ...Option) (*GRU, error) {
	if err := checkRNN("gru", name, cfg); err != nil {
		return nil, err
	}
	c := newConfig(opts)
	in, units := cfg.In, cfg.Units
	g := &GRU{Units: units, cfg: cfg}
	bshape := []int{3 * units}
	if cfg.ResetAfter {
		bshape = []int{2, 3 * units}
	}
	for i := 0; i < cfg.layers(); i++ {
		var dirs []GRUParams
		for d := 0; d < cfg.dirs(); d++ {
			w, err := initializer.GlorotUniform(rng, c.dtype, in, 3*units)
			if err != nil {
				return nil, fmt.Errorf("layers: gru %q: %w", name, err)
			}
			u, err := initializer.Orthogonal(rng, c.dtype, units, 3*units)
			if err != nil {
				return nil, fmt.Errorf("layers: gru %q: %w", name, err)
			}
			n := rnnName(name, i, cfg.dir(d))
			dirs = append(dirs, GRUParams{W: graph.NewParam(n+"/kernel", w), U: graph.NewParam(n+"/recurrent_kernel", u),
				B: graph.NewParam(n+"/bias", tensor.Zeros(c.dtype, bshape...)), ResetAfter: cfg.ResetAfter})
		}
		g.W = append(g.W, dirs)
		in = units * cfg.dirs()
	}
	return g, nil
}

// Run returns the last layer's per-step outputs and every final state,
// layer-major; init is nil (zeros) or one [B, H] state per layer and direction.
func (g *GRU) Run(x graph.Seq, init []*graph.Value) (graph.Seq, []*graph.Value) {
	if v := g.cfg.checkInit("gru", x, len(init), init != nil, dirsPerLayer(g.W)); v != nil {
		return x.With(v), []*graph.Value{v}
	}
	y, states := stackRNN(x, g.cfg.layers(), g.cfg.dirs(), init, func(x graph.Seq, i, d int, h0 *graph.Value) (graph.Seq, *graph.Value) {
		return graph.GRU(x, g.W[i][d].Weights(x.Values.Tape()), h0, g.cfg.dir(d) == 1)
	})
	return outSeq("gru", g, x.Values.Err(), y), states
}

// Forward returns the last layer's output at every step.
func (g *GRU) Forward(x graph.Seq) graph.Seq {
	y, _ := g.Run(x, nil)
	return y
}

// Cell runs one step of a one-layer, one-direction GRU: the new state [B,
// H] from the step's input x [B, In] and the previous state h [B, H]
// (graph.GRUCell), as a decoder that feeds each output back needs.
func (g *GRU) Cell(x, h *graph.Value) *graph.Value {
	t := x.Tape()
	if t == nil {
		return noTape("gru", x)
	}
	if g == nil || len(g.W) != 1 || len(g.W[0]) != 1 {
		return t.Fail(errors.New("layers: gru: Cell needs a one-layer, one-direction GRU built with NewGRU"))
	}
	return graph.GRUCell(x, h, g.W[0][0].Weights(t))
}

// Final returns the last layer's final state [B, H] ([B, 2H] bidirectional).
func (g *GRU) Final(x graph.Seq) *graph.Value {
	_, f := g.Run(x, nil)
	return concatLast(f[len(f)-g.cfg.dirs():])
}

// Params returns every layer's parameters.
func (g *GRU) Params() []*graph.Param {
	var ms Modules
	for _, dirs := range g.W {
		ms = append(ms, List(dirs))
	}
	return ms.Params()
}
