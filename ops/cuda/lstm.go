//go:build cuda

package cuda

import (
	"slices"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// lstmLauncher is one application of ops.LSTMOp on the device: the fused LSTM over
// a ragged batch, gate blocks i, f, c (g), o (Keras, cuDNN), optional
// diagonal peepholes [3H] (i, f, o; TF's LSTMCell(use_peepholes=True)),
// optional initial state h0, c0 [B, H], Reverse, and the candidate and
// cell-output activations (tanh, sigmoid, relu, identity). The output is
// [total, 2H], (h', c') per row, as ops' is.
//
// Forward runs one GEMM for every step's x·W, then per time step one GEMM
// h·U over the sequences still running (sorted by length, no padding; see
// rnnSchedule) and the fused gate kernel lstm_fwd_step. Backward runs
// through time in reverse with the fused gate-gradient kernel and one GEMM
// per step for δh, then whole-batch GEMMs for dx, dW and dU and column
// sums for the bias and peephole gradients. The step GEMMs split K over
// the grid when a step's few rows would leave the GPU idle (stepGemm). Forward keeps references to
// its inputs and its output, which must stay unchanged until Backward.
type lstmLauncher struct {
	d     *Device
	attrs ops.LSTMAttrs

	// Saved by Forward.
	s                     *rnnSchedule
	nIn, h                int
	x, w, u, b, p, h0, c0 *Buffer
	out                   *Buffer
	act                   *Buffer // [total, 4H] gate activations
}

// lstmOp returns the op of ops.LSTMOp(attrs) on the device.
func (d *Device) lstmOp(attrs ops.LSTMAttrs) *lstmLauncher {
	attrs.Offsets = slices.Clone(attrs.Offsets)
	return &lstmLauncher{d: d, attrs: attrs}
}

// check checks that the inputs are live float32 buffers of the device and
// returns In and H; their shapes and the offsets were checked by
// ops.Dispatch (the lstm op's Check).
func (o *lstmLauncher) check(x, w, u, b, p, h0, c0 *Buffer) (nIn, h int, err error) {
	const op = "lstm"
	in := []*Buffer{x, w, u, b}
	if p != nil {
		in = append(in, p)
	}
	if h0 != nil || c0 != nil {
		in = append(in, h0, c0)
	}
	if err := o.d.checkInputs(op, in...); err != nil {
		return 0, 0, err
	}
	return x.shape[1], w.shape[1] / 4, nil
}

// Forward runs the LSTM on x [total, In] with W [In, 4H], U [H, 4H],
// b [4H]; peephole may be nil, h0 and c0 both nil or both given.
func (o *lstmLauncher) Forward(x, w, u, b, peephole, h0, c0 *Buffer) (*Buffer, error) {
	nIn, h, err := o.check(x, w, u, b, peephole, h0, c0)
	if err != nil {
		return nil, err
	}
	o.Free()
	o.s = newRNNSchedule(o.attrs.Offsets, o.attrs.Reverse)
	o.nIn, o.h = nIn, h
	o.x, o.w, o.u, o.b, o.p, o.h0, o.c0 = x, w, u, b, peephole, h0, c0
	d, s, g4 := o.d, o.s, 4*h
	var out *Buffer
	err = d.do(func() error {
		if err := s.upload(d); err != nil {
			return err
		}
		var err error
		if o.act, err = d.newBuffer(tensor.Float32, tensor.Shape{s.total, g4}); err != nil {
			return err
		}
		if out, err = d.newBuffer(tensor.Float32, tensor.Shape{s.total, 2 * h}); err != nil {
			return err
		}
		if err := d.gemmRows(false, false, s.total, g4, nIn, x, 0, nIn, w, 0, g4, 0, o.act, 0, g4); err != nil {
			return err
		}
		st, err := d.zeroBuffers(tensor.Shape{s.batch, h}, tensor.Shape{s.batch, h}, tensor.Shape{s.batch, g4})
		if err != nil {
			return err
		}
		defer freeAll(st...)
		hs, cs, z := st[0], st[1], st[2]
		if h0 != nil {
			n := s.batch * h
			if err := d.launch("rnn_gather_rows", grid1(n), block1, ptr(h0), s.order(), ptr(hs), i64(s.batch), i64(h)); err != nil {
				return err
			}
			if err := d.launch("rnn_gather_rows", grid1(n), block1, ptr(c0), s.order(), ptr(cs), i64(s.batch), i64(h)); err != nil {
				return err
			}
		}
		for t, n := range s.active {
			if err := d.stepGemm(false, n, g4, h, hs, 0, h, u, 0, g4, 0, z, 0, g4); err != nil {
				return err
			}
			if err := d.launch("lstm_fwd_step", grid1(n*h), block1, ptr(o.act), ptr(z), ptr(b), ptr(peephole),
				ptr(hs), ptr(cs), ptr(out), s.rows(t), i64(n), i64(h), i64(int(o.attrs.Candidate)), i64(int(o.attrs.Cell))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		o.Free()
		return done(out, err)
	}
	o.out = out
	return out, nil
}

// LSTM gradient slots, in the order of Backward's need and results.
const (
	lstmGradX = iota
	lstmGradW
	lstmGradU
	lstmGradB
	lstmGradPeephole
	lstmGradH0
	lstmGradC0
)

// Backward returns the gradients for the upstream gradient gout
// [total, 2H] of Forward's output, indexed by LSTMGradX ... LSTMGradC0,
// for the slots need asks for (nil for the others and for inputs Forward
// did not get). The formulas are ops.LSTMOp's (kernels/rnn.cu,
// lstm_bwd_step).
func (o *lstmLauncher) Backward(gout *Buffer, need [7]bool) ([7]*Buffer, error) {
	const op = "lstm"
	var g [7]*Buffer
	in := []*Buffer{o.x, o.w, o.u, o.b, o.out, gout}
	if err := o.d.checkInputs(op, in...); err != nil {
		return g, err
	}
	d, s, h, nIn := o.d, o.s, o.h, o.nIn
	g4 := 4 * h
	shapes := [7]tensor.Shape{{s.total, nIn}, {nIn, g4}, {h, g4}, {g4}, {3 * h}, {s.batch, h}, {s.batch, h}}
	given := [7]bool{true, true, true, true, o.p != nil, o.h0 != nil, o.c0 != nil}
	err := d.do(func() error {
		for i := range g {
			if need[i] && given[i] {
				var err error
				if g[i], err = d.newBuffer(tensor.Float32, shapes[i]); err != nil {
					return err
				}
			}
		}
		sc := []tensor.Shape{{s.total, g4}, {s.batch, g4}, {s.batch, h}, {s.batch, h}}
		if g[lstmGradPeephole] != nil {
			sc = append(sc, tensor.Shape{s.total, 3 * h})
		}
		st, err := d.zeroBuffers(sc...)
		if err != nil {
			return err
		}
		defer freeAll(st...)
		dz, dzs, dh, dc := st[0], st[1], st[2], st[3]
		var dpp *Buffer
		if len(st) > 4 {
			dpp = st[4]
		}
		for t := len(s.active) - 1; t >= 0; t-- {
			n := s.active[t]
			if err := d.launch("lstm_bwd_step", grid1(n*h), block1, ptr(o.act), ptr(o.out), ptr(o.c0), s.prev(),
				ptr(gout), ptr(o.p), ptr(dh), ptr(dc), ptr(dz), ptr(dzs), ptr(dpp), s.rows(t), i64(n), i64(h),
				i64(int(o.attrs.Candidate)), i64(int(o.attrs.Cell))); err != nil {
				return err
			}
			if err := d.stepGemm(true, n, h, g4, dzs, 0, g4, o.u, 0, g4, 0, dh, 0, h); err != nil {
				return err
			}
		}
		for _, sg := range [][2]*Buffer{{dh, g[lstmGradH0]}, {dc, g[lstmGradC0]}} {
			if sg[1] != nil {
				if err := d.launch("rnn_scatter_rows", grid1(s.batch*h), block1, ptr(sg[0]), s.order(), ptr(sg[1]), i64(s.batch), i64(h)); err != nil {
					return err
				}
			}
		}
		if err := d.inputGrads(o.x, o.w, dz, s.total, nIn, g4, g[lstmGradX], g[lstmGradW], g[lstmGradB]); err != nil {
			return err
		}
		if g[lstmGradU] != nil {
			hp, err := d.newBuffer(tensor.Float32, tensor.Shape{s.total, h})
			if err != nil {
				return err
			}
			defer hp.Free()
			if err := d.launch("rnn_prev_states", grid1(s.total*h), block1, ptr(o.out), i64(2*h), ptr(o.h0), s.prev(),
				ptr(hp), i64(s.total), i64(h)); err != nil {
				return err
			}
			if err := d.gemmRows(true, false, h, g4, s.total, hp, 0, h, dz, 0, g4, 0, g[lstmGradU], 0, g4); err != nil {
				return err
			}
		}
		if dpp != nil {
			return d.colSum(dpp, s.total, 3*h, g[lstmGradPeephole])
		}
		return nil
	})
	if err != nil {
		freeAll(g[:]...)
		return [7]*Buffer{}, err
	}
	return g, nil
}

// Free releases what Forward saved on the device (the gate activations
// and the schedule); the inputs and the output stay the caller's.
func (o *lstmLauncher) Free() {
	freeAll(o.act)
	o.s.free()
	o.act, o.s = nil, nil
	o.x, o.w, o.u, o.b, o.p, o.h0, o.c0, o.out = nil, nil, nil, nil, nil, nil, nil, nil
}
