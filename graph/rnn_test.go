package graph

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// composedLSTMStep is one LSTM step written with primitive graph ops, the
// reference for the fused op: z = x·W + b + h·U, gate blocks i, f, c, o.
func composedLSTMStep(x *Value, s LSTMState, w LSTMWeights, h int) LSTMState {
	z := Add(Linear(x, w.W, w.B), MatMul(s.H, w.U, false, false))
	zi, zf, zg, zo := Slice(z, 1, 0, h), Slice(z, 1, h, 2*h), Slice(z, 1, 2*h, 3*h), Slice(z, 1, 3*h, 4*h)
	if w.Peephole != nil {
		zi = Add(zi, Mul(Slice(w.Peephole, 0, 0, h), s.C))
		zf = Add(zf, Mul(Slice(w.Peephole, 0, h, 2*h), s.C))
	}
	c := Add(Mul(Sigmoid(zf), s.C), Mul(Sigmoid(zi), Tanh(zg)))
	if w.Peephole != nil {
		zo = Add(zo, Mul(Slice(w.Peephole, 0, 2*h, 3*h), c))
	}
	return LSTMState{Mul(Sigmoid(zo), Tanh(c)), c}
}

// composedGRUStep is Keras GRUCell with primitive graph ops.
func composedGRUStep(x, hp *Value, w GRUWeights, h int) *Value {
	var xw, hu *Value
	if w.ResetAfter {
		xw = Linear(x, w.W, Reshape(Slice(w.B, 0, 0, 1), 3*h))
		hu = Linear(hp, w.U, Reshape(Slice(w.B, 0, 1, 2), 3*h))
	} else {
		xw = Linear(x, w.W, w.B)
		hu = MatMul(hp, Slice(w.U, 1, 0, 2*h), false, false)
	}
	z := Sigmoid(Add(Slice(xw, 1, 0, h), Slice(hu, 1, 0, h)))
	r := Sigmoid(Add(Slice(xw, 1, h, 2*h), Slice(hu, 1, h, 2*h)))
	var hh *Value
	if w.ResetAfter {
		hh = Tanh(Add(Slice(xw, 1, 2*h, 3*h), Mul(r, Slice(hu, 1, 2*h, 3*h))))
	} else {
		hh = Tanh(Add(Slice(xw, 1, 2*h, 3*h), MatMul(Mul(r, hp), Slice(w.U, 1, 2*h, 3*h), false, false)))
	}
	return Add(Mul(z, hp), Mul(Sub(hh.tape.Const(tensor.MustFromSlice([]float64{1}, 1)), z), hh))
}

// composeSeqs runs step over each sequence of x alone (a batch of one),
// forward or reverse, from its row of init (nil for zeros), and returns
// the per-row outputs in x's row order and the final states [B, S].
func composeSeqs(x Seq, init *Value, s int, reverse bool, step func(xr, st *Value) *Value) (*Value, *Value) {
	tape := x.Values.Tape()
	rows := make([]*Value, x.Offsets[len(x.Offsets)-1])
	finals := make([]*Value, x.BatchSize())
	for q := range finals {
		st := tape.Const(tensor.Zeros(tensor.Float64, 1, s))
		if init != nil {
			st = Slice(init, 0, q, q+1)
		}
		for t := 0; t < x.Offsets[q+1]-x.Offsets[q]; t++ {
			r := x.Offsets[q] + t
			if reverse {
				r = x.Offsets[q+1] - 1 - t
			}
			st = step(Slice(x.Values, 0, r, r+1), st)
			rows[r] = st
		}
		finals[q] = st
	}
	return Concat(0, rows...), Concat(0, finals...)
}

// weighted returns Σ out∘g for a fixed random g, a scalar loss that reaches
// every element of out.
func weighted(out *Value, seed uint64) *Value {
	return Sum(Mul(out, out.tape.Const(randn(seed, out.Shape()...))))
}

var ragged = []int{0, 3, 3, 4, 9} // lengths 3, 0, 1, 5

func TestLSTMFusedEqualsComposition(t *testing.T) {
	const h = 3
	for _, tc := range []struct {
		name           string
		peep, init, rv bool
	}{{"plain", false, false, false}, {"peephole_init", true, true, false}, {"reverse_all", true, true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(fused bool) (*tensor.Tensor, []*Value) {
				tape := NewTape()
				x := Seq{tape.Var(randn(1, 9, 2)), ragged}
				w := LSTMWeights{W: tape.Var(randn(2, 2, 4*h)), U: tape.Var(randn(3, h, 4*h)), B: tape.Var(randn(4, 4*h))}
				leaves := []*Value{x.Values, w.W, w.U, w.B}
				if tc.peep {
					w.Peephole = tape.Var(randn(5, 3*h))
					leaves = append(leaves, w.Peephole)
				}
				var init *LSTMState
				if tc.init {
					init = &LSTMState{tape.Var(randn(6, 4, h)), tape.Var(randn(7, 4, h))}
					leaves = append(leaves, init.H, init.C)
				}
				var out, fh, fc *Value
				if fused {
					seq, final := LSTM(x, w, init, tc.rv)
					out, fh, fc = seq.Values, final.H, final.C
				} else {
					var hc0 *Value
					if init != nil {
						hc0 = Concat(1, init.H, init.C)
					}
					hs, finals := composeSeqs(x, hc0, 2*h, tc.rv, func(xr, st *Value) *Value {
						s := composedLSTMStep(xr, LSTMState{Slice(st, 1, 0, h), Slice(st, 1, h, 2*h)}, w, h)
						return Concat(1, s.H, s.C)
					})
					out, fh, fc = Slice(hs, 1, 0, h), Slice(finals, 1, 0, h), Slice(finals, 1, h, 2*h)
				}
				loss := Add(Add(weighted(out, 10), weighted(fh, 11)), weighted(fc, 12))
				require.NoError(t, tape.Backward(loss))
				res, err := Concat(0, Reshape(out, -1), Reshape(fh, -1), Reshape(fc, -1)).Tensor()
				require.NoError(t, err)
				return res, leaves
			}
			requireSameRuns(t, run)
		})
	}
}

func TestGRUFusedEqualsComposition(t *testing.T) {
	const h = 3
	for _, resetAfter := range []bool{true, false} {
		for _, rv := range []bool{false, true} {
			run := func(fused bool) (*tensor.Tensor, []*Value) {
				tape := NewTape()
				x := Seq{tape.Var(randn(1, 9, 2)), ragged}
				b := tape.Var(randn(4, 3*h))
				if resetAfter {
					b = tape.Var(randn(4, 2, 3*h))
				}
				w := GRUWeights{W: tape.Var(randn(2, 2, 3*h)), U: tape.Var(randn(3, h, 3*h)), B: b, ResetAfter: resetAfter}
				h0 := tape.Var(randn(5, 4, h))
				var out, final *Value
				if fused {
					seq, f := GRU(x, w, h0, rv)
					out, final = seq.Values, f
				} else {
					out, final = composeSeqs(x, h0, h, rv, func(xr, st *Value) *Value { return composedGRUStep(xr, st, w, h) })
				}
				require.NoError(t, tape.Backward(Add(weighted(out, 10), weighted(final, 11))))
				res, err := Concat(0, Reshape(out, -1), Reshape(final, -1)).Tensor()
				require.NoError(t, err)
				return res, []*Value{x.Values, w.W, w.U, w.B, h0}
			}
			requireSameRuns(t, run)
		}
	}
}

func TestRNNCellsAndErrors(t *testing.T) {
	tape := NewTape()
	x := tape.Const(randn(1, 2, 3))
	w := LSTMWeights{W: tape.Const(randn(2, 3, 8)), U: tape.Const(randn(3, 2, 8)), B: tape.Const(randn(4, 8))}
	s := LSTMState{tape.Const(randn(5, 2, 2)), tape.Const(randn(6, 2, 2))}
	got := LSTMCell(x, s, w)
	want := composedLSTMStep(x, s, w, 2)
	for _, p := range [][2]*Value{{want.H, got.H}, {want.C, got.C}} {
		a, err := p[0].Tensor()
		require.NoError(t, err)
		b, err := p[1].Tensor()
		require.NoError(t, err)
		requireNear(t, a, b, 1e-14)
	}
	// A wrong kernel fails every output, naming the op; nothing panics.
	bad := LSTMWeights{W: tape.Const(randn(2, 4, 8)), U: w.U, B: w.B}
	seq, final := LSTM(Seq{x, []int{0, 1, 2}}, bad, nil, false)
	for _, v := range []*Value{seq.Values, final.H, final.C, LSTMCell(x, s, bad).H} {
		require.ErrorContains(t, v.Err(), "want x [rows, In] and W [In, 4H]")
	}
	_, gf := GRU(Seq{x, []int{0, 3}}, GRUWeights{W: tape.Const(randn(2, 3, 6)), U: tape.Const(randn(3, 2, 6)), B: tape.Const(randn(4, 6))}, nil, false)
	require.ErrorContains(t, gf.Err(), "gru: inputs float64[2 3], float64[3 6], float64[2 6], float64[6]: offsets [0 3]")
	require.ErrorContains(t, GRUCell(x, s.H, GRUWeights{W: tape.Const(randn(2, 3, 6)), U: tape.Const(randn(3, 2, 6)), B: tape.Const(randn(4, 6)), ResetAfter: true}).Err(), "gru_cell")
}

// requireSameRuns requires run's composed (false) and fused (true) forms
// to give the same output and the same gradient for every leaf, to
// float64 round-off.
func requireSameRuns(t *testing.T, run func(fused bool) (*tensor.Tensor, []*Value)) {
	t.Helper()
	want, wl := run(false)
	got, gl := run(true)
	requireNear(t, want, got, 1e-12)
	for i := range wl {
		requireNear(t, wl[i].Grad(), gl[i].Grad(), 1e-12)
	}
}

// requireNear checks got against want elementwise within tol·(1 + |want|).
func requireNear(t *testing.T, want, got *tensor.Tensor, tol float64) {
	t.Helper()
	require.NotNil(t, want)
	require.NotNil(t, got)
	require.Equal(t, want.Shape(), got.Shape())
	for i := range want.Size() {
		w := want.At(i)
		require.InDeltaf(t, w, got.At(i), tol*(1+abs(w)), "element %d", i)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// Benchmark sizes (the issue's): batch 32, 100 steps, input 128, hidden 256,
// float32, forward and backward. Both report GFLOP/s over the same count:
// forward 2·N·(In+H)·4H for N = B·T steps, backward twice that.
const (
	benchB, benchT, benchIn, benchH = 32, 100, 128, 256
	benchFlops                      = 3 * 2 * benchB * benchT * (benchIn + benchH) * 4 * benchH
)

func benchLSTM(b *testing.B, step func(tape *Tape, x Seq, w LSTMWeights) *Value) {
	rng := tensor.NewRNG(1)
	mk := func(shape ...int) *tensor.Tensor {
		t, err := tensor.RandNormal(rng, tensor.Float32, 0, 0.1, shape...)
		require.NoError(b, err)
		return t
	}
	x, wt, ut, bt := mk(benchB*benchT, benchIn), mk(benchIn, 4*benchH), mk(benchH, 4*benchH), mk(4*benchH)
	off := make([]int, benchB+1)
	for i := range off {
		off[i] = i * benchT
	}
	tape := NewTape() // one tape released after each step, as a training loop runs
	b.ResetTimer()
	for range b.N {
		w := LSTMWeights{W: tape.Var(wt), U: tape.Var(ut), B: tape.Var(bt)}
		require.NoError(b, tape.Backward(Sum(step(tape, Seq{tape.Var(x), off}, w))))
		tape.Release()
	}
	b.ReportMetric(benchFlops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkLSTMFused(b *testing.B) {
	benchLSTM(b, func(_ *Tape, x Seq, w LSTMWeights) *Value {
		out, _ := LSTM(x, w, nil, false)
		return out.Values
	})
}

// BenchmarkGRUFused times the fused GRU at the LSTM benchmarks' sizes, in
// both of its forms (reset gate before the recurrent product, as the
// original GRU; after it, as Keras' default and cuDNN), forward and
// backward; GFLOP/s counts its three gate blocks as benchFlops counts
// the LSTM's four.
func BenchmarkGRUFused(b *testing.B) {
	const flops = 3 * 2 * benchB * benchT * (benchIn + benchH) * 3 * benchH
	for _, resetAfter := range []bool{false, true} {
		b.Run(fmt.Sprintf("reset_after=%v", resetAfter), func(b *testing.B) {
			rng := tensor.NewRNG(1)
			mk := func(shape ...int) *tensor.Tensor {
				t, err := tensor.RandNormal(rng, tensor.Float32, 0, 0.1, shape...)
				require.NoError(b, err)
				return t
			}
			bias := mk(3 * benchH)
			if resetAfter {
				bias = mk(2, 3*benchH)
			}
			x, wt, ut := mk(benchB*benchT, benchIn), mk(benchIn, 3*benchH), mk(benchH, 3*benchH)
			off := make([]int, benchB+1)
			for i := range off {
				off[i] = i * benchT
			}
			tape := NewTape()
			b.ResetTimer()
			for range b.N {
				w := GRUWeights{W: tape.Var(wt), U: tape.Var(ut), B: tape.Var(bias), ResetAfter: resetAfter}
				out, _ := GRU(Seq{tape.Var(x), off}, w, nil, false)
				require.NoError(b, tape.Backward(Sum(out.Values)))
				tape.Release()
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkLSTMComposed steps the whole batch with primitive ops: gather
// step t's rows, composedLSTMStep, and stack the hidden states.
func BenchmarkLSTMComposed(b *testing.B) {
	benchLSTM(b, func(tape *Tape, x Seq, w LSTMWeights) *Value {
		s := LSTMState{tape.Const(tensor.Zeros(tensor.Float32, benchB, benchH)), tape.Const(tensor.Zeros(tensor.Float32, benchB, benchH))}
		hs := make([]*Value, benchT)
		for t := range benchT {
			idx := make([]int32, benchB)
			for q := range idx {
				idx[q] = int32(q*benchT + t)
			}
			s = composedLSTMStep(Gather(x.Values, tensor.MustFromSlice(idx, benchB), 0), s, w, benchH)
			hs[t] = s.H
		}
		return Stack(0, hs...)
	})
}
