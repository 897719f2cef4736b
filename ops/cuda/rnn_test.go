//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// tolRNN is the fused recurrences' tolerance against ops' LSTM and GRU:
// each step is a GEMM (tolGEMM's float32 sums in another order) whose
// result feeds the next step through float32 gate math (expf, tanhf
// within 2 ulp, where the CPU kernel rounds float64 gate math), so the
// differences compound over the steps; the test sequences are short
// (at most 21 steps) with weights that keep the gates unsaturated.
var tolRNN = tol{rtol: 2e-4, atol: 2e-4}

// rnnCases are ragged batches with empty, length-1 and equal-length
// sequences, odd sizes and a longer one.
var rnnCases = []struct {
	off []int
	nIn int
	h   int
}{
	{[]int{0, 3, 3, 4, 9}, 5, 7},
	{[]int{0, 1}, 1, 1},
	{[]int{0, 0}, 3, 4},
	{[]int{0, 0, 5, 5, 12, 13}, 17, 33},
	{[]int{0, 21, 38, 59, 60}, 127, 65},
}

func TestLSTM(t *testing.T) {
	rng := tensor.NewRNG(21)
	for ci, c := range rnnCases {
		for _, peep := range []bool{false, true} {
			for _, init := range []bool{false, true} {
				for _, rev := range []bool{false, true} {
					t.Run(fmt.Sprint(ci, c.off, "peep", peep, "init", init, "rev", rev), func(t *testing.T) {
						b, total, h := len(c.off)-1, c.off[len(c.off)-1], c.h
						x, w, u := randn(t, rng, total, c.nIn), uniform(t, rng, -0.3, 0.3, c.nIn, 4*h), uniform(t, rng, -0.3, 0.3, h, 4*h)
						bias := uniform(t, rng, -0.5, 0.5, 4*h)
						in := []*tensor.Tensor{x, w, u, bias}
						slot := []int{lstmGradX, lstmGradW, lstmGradU, lstmGradB}
						var pb, h0b, c0b *Buffer
						if peep {
							p := uniform(t, rng, -0.5, 0.5, 3*h)
							in, slot, pb = append(in, p), append(slot, lstmGradPeephole), up(t, p)
						}
						if init {
							h0, c0 := uniform(t, rng, -1, 1, b, h), uniform(t, rng, -1, 1, b, h)
							in, slot = append(in, h0, c0), append(slot, lstmGradH0, lstmGradC0)
							h0b, c0b = up(t, h0), up(t, c0)
						}
						gout := randn(t, rng, total, 2*h)
						need := make([]bool, len(in))
						var gneed [7]bool
						for i, s := range slot {
							need[i], gneed[s] = true, true
						}
						attrs := ops.LSTMAttrs{Offsets: c.off, Reverse: rev}
						want, grads := cpuOp(t, ops.LSTMOp(attrs), in, gout, need)
						o := dev.lstmOp(attrs)
						defer o.Free()
						y, err := o.Forward(up(t, x), up(t, w), up(t, u), up(t, bias), pb, h0b, c0b)
						require.NoError(t, err)
						defer y.Free()
						requireClose(t, want, y, tolRNN, "forward")
						g, err := o.Backward(up(t, gout), gneed)
						require.NoError(t, err)
						defer freeAll(g[:]...)
						for i, s := range slot {
							requireClose(t, grads[i], g[s], tolRNN, fmt.Sprint("gradient of input ", i))
						}
					})
				}
			}
		}
	}
}

// TestLSTMActivations: lstm (peepholes, h0/c0, reversed or not) and
// lstm_cell with every pair of candidate and cell-output activations
// (Paddle's; models/srl uses relu and sigmoid) dispatch to the CUDA
// kernel and compute the CPU op's output and gradients.
func TestLSTMActivations(t *testing.T) {
	rng := tensor.NewRNG(23)
	b, n, h := 3, 5, 6
	off := []int{0, 4, 4, 9}
	acts := []ops.RNNActivation{ops.ActTanh, ops.ActSigmoid, ops.ActRelu, ops.ActIdentity}
	type lstmCase struct {
		name   string
		op     func() ops.Op // an op value serves one Forward: one for the CPU, one for the Device
		shapes [][]int
	}
	var cases []lstmCase
	for _, cand := range acts {
		for _, cell := range acts {
			rev := cand == cell
			cases = append(cases, lstmCase{fmt.Sprint("lstm ", cand, " ", cell, " rev ", rev),
				func() ops.Op {
					return ops.LSTMOp(ops.LSTMAttrs{Offsets: off, Reverse: rev, Candidate: cand, Cell: cell})
				}, [][]int{{9, n}, {n, 4 * h}, {h, 4 * h}, {4 * h}, {3 * h}, {b, h}, {b, h}}})
		}
		cases = append(cases, lstmCase{fmt.Sprint("lstm_cell ", cand, " ", acts[3-int(cand)]),
			func() ops.Op { return ops.LSTMCellActsOp(cand, acts[3-int(cand)]) },
			[][]int{{b, n}, {b, h}, {b, h}, {n, 4 * h}, {h, 4 * h}, {4 * h}, {3 * h}}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var in, ind []*tensor.Tensor
			for _, s := range c.shapes {
				x := uniform(t, rng, -0.5, 0.5, s...)
				in, ind = append(in, x), append(ind, onDevice(t, x))
			}
			need := make([]bool, len(in))
			for i := range need {
				need[i] = true
			}
			want, _ := cpuOp(t, c.op(), in, nil, need)
			gout := uniform(t, rng, -1, 1, want.Shape()...)
			want, wantG := cpuOp(t, c.op(), in, gout, need)
			k, err := ops.Dispatch(c.op(), ind)
			require.NoError(t, err)
			_, isKernel := k.(*op)
			require.True(t, isKernel, "the CUDA kernel runs every activation")
			out, err := k.Forward(ind)
			require.NoError(t, err)
			t.Cleanup(k.(ops.Freer).Free)
			requireCloseHost(t, want, toHost(t, out), tolRNN, "forward")
			grads, err := k.Backward(ind, out, onDevice(t, gout), need)
			require.NoError(t, err)
			for i, g := range grads {
				requireCloseHost(t, wantG[i], toHost(t, g), tolRNN, fmt.Sprint("gradient of input ", i))
			}
		})
	}
}

func TestGRU(t *testing.T) {
	rng := tensor.NewRNG(22)
	for ci, c := range rnnCases {
		for _, ra := range []bool{false, true} {
			for _, init := range []bool{false, true} {
				for _, rev := range []bool{false, true} {
					t.Run(fmt.Sprint(ci, c.off, "reset_after", ra, "init", init, "rev", rev), func(t *testing.T) {
						b, total, h := len(c.off)-1, c.off[len(c.off)-1], c.h
						x, w, u := randn(t, rng, total, c.nIn), uniform(t, rng, -0.3, 0.3, c.nIn, 3*h), uniform(t, rng, -0.3, 0.3, h, 3*h)
						bshape := []int{3 * h}
						if ra {
							bshape = []int{2, 3 * h}
						}
						bias := uniform(t, rng, -0.5, 0.5, bshape...)
						in := []*tensor.Tensor{x, w, u, bias}
						var h0b *Buffer
						if init {
							h0 := uniform(t, rng, -1, 1, b, h)
							in, h0b = append(in, h0), up(t, h0)
						}
						gout := randn(t, rng, total, h)
						need := make([]bool, len(in))
						var gneed [5]bool
						for i := range need {
							need[i], gneed[i] = true, true
						}
						attrs := ops.GRUAttrs{Offsets: c.off, Reverse: rev, ResetAfter: ra}
						want, grads := cpuOp(t, ops.GRUOp(attrs), in, gout, need)
						o := dev.gruOp(attrs)
						defer o.Free()
						y, err := o.Forward(up(t, x), up(t, w), up(t, u), up(t, bias), h0b)
						require.NoError(t, err)
						defer y.Free()
						requireClose(t, want, y, tolRNN, "forward")
						g, err := o.Backward(up(t, gout), gneed)
						require.NoError(t, err)
						defer freeAll(g[:]...)
						for i := range in {
							requireClose(t, grads[i], g[i], tolRNN, fmt.Sprint("gradient of input ", i))
						}
					})
				}
			}
		}
	}
}

// Gradients not asked for are nil and skip their work (the peephole
// terms, the weight GEMMs); the ones asked for still match ops'.
func TestRNNPartialGrads(t *testing.T) {
	rng := tensor.NewRNG(24)
	off, nIn, h := []int{0, 4, 4, 7}, 5, 6
	b, total := len(off)-1, off[len(off)-1]
	x, gout := randn(t, rng, total, nIn), randn(t, rng, total, 2*h)
	lin := []*tensor.Tensor{x, uniform(t, rng, -0.3, 0.3, nIn, 4*h), uniform(t, rng, -0.3, 0.3, h, 4*h),
		uniform(t, rng, -0.5, 0.5, 4*h), uniform(t, rng, -0.5, 0.5, 3*h), uniform(t, rng, -1, 1, b, h), uniform(t, rng, -1, 1, b, h)}
	_, grads := cpuOp(t, ops.LSTMOp(ops.LSTMAttrs{Offsets: off}), lin, gout, []bool{true, false, false, false, false, true, false})
	o := dev.lstmOp(ops.LSTMAttrs{Offsets: off})
	defer o.Free()
	y, err := o.Forward(up(t, lin[0]), up(t, lin[1]), up(t, lin[2]), up(t, lin[3]), up(t, lin[4]), up(t, lin[5]), up(t, lin[6]))
	require.NoError(t, err)
	defer y.Free()
	g, err := o.Backward(up(t, gout), [7]bool{lstmGradX: true, lstmGradH0: true})
	require.NoError(t, err)
	defer freeAll(g[:]...)
	requireClose(t, grads[0], g[lstmGradX], tolRNN, "lstm dx")
	requireClose(t, grads[5], g[lstmGradH0], tolRNN, "lstm dh0")
	for _, i := range []int{lstmGradW, lstmGradU, lstmGradB, lstmGradPeephole, lstmGradC0} {
		require.Nil(t, g[i], "lstm gradient slot %d", i)
	}

	gin := []*tensor.Tensor{x, uniform(t, rng, -0.3, 0.3, nIn, 3*h), uniform(t, rng, -0.3, 0.3, h, 3*h), uniform(t, rng, -0.5, 0.5, 3*h)}
	gg := randn(t, rng, total, h)
	_, grads = cpuOp(t, ops.GRUOp(ops.GRUAttrs{Offsets: off}), gin, gg, []bool{false, false, true, false})
	og := dev.gruOp(ops.GRUAttrs{Offsets: off})
	defer og.Free()
	yg, err := og.Forward(up(t, gin[0]), up(t, gin[1]), up(t, gin[2]), up(t, gin[3]), nil)
	require.NoError(t, err)
	defer yg.Free()
	gr, err := og.Backward(up(t, gg), [5]bool{gruGradU: true, gruGradH0: true})
	require.NoError(t, err)
	defer freeAll(gr[:]...)
	requireClose(t, grads[2], gr[gruGradU], tolRNN, "gru dU")
	for _, i := range []int{gruGradX, gruGradW, gruGradB, gruGradH0} {
		require.Nil(t, gr[i], "gru gradient slot %d (h0 was not given)", i)
	}
}

// Bad shapes and offsets are errors that name the op and the shapes.
func TestRNNErrors(t *testing.T) {
	rng := tensor.NewRNG(23)
	x, w, u, b := up(t, randn(t, rng, 4, 3)), up(t, randn(t, rng, 3, 8)), up(t, randn(t, rng, 2, 8)), up(t, randn(t, rng, 8))
	xt, wt, ut, bt := onDevice(t, randn(t, rng, 4, 3)), onDevice(t, randn(t, rng, 3, 8)), onDevice(t, randn(t, rng, 2, 8)), onDevice(t, randn(t, rng, 8))
	for _, c := range []struct {
		name string
		run  func() error
		msg  string
	}{
		// Shapes and offsets: ops.Dispatch's check (the ops' Check) on device tensors.
		{"lstm offsets", func() error {
			_, err := ops.Run(ops.LSTMOp(ops.LSTMAttrs{Offsets: []int{0, 3}}), xt, wt, ut, bt)
			return err
		}, "end at 3"},
		{"lstm U", func() error {
			_, err := ops.Run(ops.LSTMOp(ops.LSTMAttrs{Offsets: []int{0, 4}}), xt, wt, bt, bt)
			return err
		}, "want U [2 8]"},
		{"lstm h0 without c0", func() error {
			_, err := dev.lstmOp(ops.LSTMAttrs{Offsets: []int{0, 4}}).Forward(x, w, u, b, nil, up(t, randn(t, rng, 1, 2)), nil)
			return err
		}, "nil input"},
		{"gru bias", func() error {
			_, err := ops.Run(ops.GRUOp(ops.GRUAttrs{Offsets: []int{0, 4}, ResetAfter: true}), xt, onDevice(t, randn(t, rng, 3, 6)), onDevice(t, randn(t, rng, 2, 6)), onDevice(t, randn(t, rng, 6)))
			return err
		}, "want bias [2 6]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			var oe *ops.Error
			require.ErrorAs(t, err, &oe)
			require.ErrorContains(t, err, c.msg)
		})
	}
}

// BenchmarkLSTM is the fused LSTM at the shape, batch 64 of 100
// steps, input and hidden 512, forward and backward (every gradient). The
// GFLOP/s count the GEMMs: 2·total·4H·(In + H) forward, twice that
// backward (δh, dx, dW, dU).
func BenchmarkLSTM(b *testing.B) {
	const batch, steps, nIn, h = 64, 100, 512, 512
	off := make([]int, batch+1)
	for i := range off {
		off[i] = i * steps
	}
	x, w, u, bias := upB(b, batch*steps, nIn), upB(b, nIn, 4*h), upB(b, h, 4*h), upB(b, 4*h)
	gout := upB(b, batch*steps, 2*h)
	flops := 3 * 2 * float64(batch*steps) * 4 * h * (nIn + h)
	o := dev.lstmOp(ops.LSTMAttrs{Offsets: off})
	b.Cleanup(o.Free)
	b.ResetTimer()
	for b.Loop() {
		y, err := o.Forward(x, w, u, bias, nil, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		g, err := o.Backward(gout, [7]bool{true, true, true, true})
		if err != nil {
			b.Fatal(err)
		}
		freeAll(append(g[:], y)...)
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
