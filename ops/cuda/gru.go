//go:build cuda

package cuda

import (
	"slices"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// gruLauncher is one application of ops.GRUOp on the device: the fused GRU over a
// ragged batch, gate blocks z, r, h̃ (Keras), with ResetAfter (Keras
// reset_after=True, cuDNN's form, bias [2, 3H]) or without (Cho et al.
// 2014, bias [3H]), optional initial state h0 [B, H], and Reverse. The
// output is h' per row, [total, H].
//
// Forward is LSTM's structure: one GEMM for every step's x·W, then per
// step the recurrent GEMM on the active rows and the fused gate kernel;
// without ResetAfter a step takes two GEMMs, h·[Uz Ur] and then (r∘h)·Uh,
// each followed by half of the gate kernel. Backward runs through time in
// reverse likewise, then whole-batch GEMMs for dx, dW and dU. Forward
// keeps references to its inputs and its output, which must stay
// unchanged until Backward.
type gruLauncher struct {
	d     *Device
	attrs ops.GRUAttrs

	// Saved by Forward.
	s              *rnnSchedule
	nIn, h         int
	x, w, u, b, h0 *Buffer
	out            *Buffer
	act, rech      *Buffer // [total, 3H] z, r, h̃; [total, H] h·Uh + b'h (ResetAfter)
}

// gruOp returns the op of ops.GRUOp(attrs) on the device.
func (d *Device) gruOp(attrs ops.GRUAttrs) *gruLauncher {
	attrs.Offsets = slices.Clone(attrs.Offsets)
	return &gruLauncher{d: d, attrs: attrs}
}

// check checks that the inputs are live float32 buffers of the device and
// returns In and H; their shapes and the offsets were checked by
// ops.Dispatch (the gru op's Check).
func (o *gruLauncher) check(x, w, u, b, h0 *Buffer) (nIn, h int, err error) {
	const op = "gru"
	in := []*Buffer{x, w, u, b}
	if h0 != nil {
		in = append(in, h0)
	}
	if err := o.d.checkInputs(op, in...); err != nil {
		return 0, 0, err
	}
	return x.shape[1], w.shape[1] / 3, nil
}

// Forward runs the GRU on x [total, In] with W [In, 3H], U [H, 3H] and b;
// h0 may be nil.
func (o *gruLauncher) Forward(x, w, u, b, h0 *Buffer) (*Buffer, error) {
	nIn, h, err := o.check(x, w, u, b, h0)
	if err != nil {
		return nil, err
	}
	o.Free()
	o.s = newRNNSchedule(o.attrs.Offsets, o.attrs.Reverse)
	o.nIn, o.h = nIn, h
	o.x, o.w, o.u, o.b, o.h0 = x, w, u, b, h0
	d, s, g3, ra := o.d, o.s, 3*h, o.attrs.ResetAfter
	var out *Buffer
	err = d.do(func() error {
		if err := s.upload(d); err != nil {
			return err
		}
		var err error
		if o.act, err = d.newBuffer(tensor.Float32, tensor.Shape{s.total, g3}); err != nil {
			return err
		}
		if ra {
			if o.rech, err = d.newBuffer(tensor.Float32, tensor.Shape{s.total, h}); err != nil {
				return err
			}
		}
		if out, err = d.newBuffer(tensor.Float32, tensor.Shape{s.total, h}); err != nil {
			return err
		}
		if err := d.gemmRows(false, false, s.total, g3, nIn, x, 0, nIn, w, 0, g3, 0, o.act, 0, g3); err != nil {
			return err
		}
		st, err := d.zeroBuffers(tensor.Shape{s.batch, h}, tensor.Shape{s.batch, g3}, tensor.Shape{s.batch, h})
		if err != nil {
			return err
		}
		defer freeAll(st...)
		hs, rec, rh := st[0], st[1], st[2]
		if h0 != nil {
			if err := d.launch("rnn_gather_rows", grid1(s.batch*h), block1, ptr(h0), s.order(), ptr(hs), i64(s.batch), i64(h)); err != nil {
				return err
			}
		}
		for t, n := range s.active {
			grid, rows := grid1(n*h), s.rows(t)
			if ra {
				if err := d.stepGemm(false, n, g3, h, hs, 0, h, u, 0, g3, 0, rec, 0, g3); err != nil {
					return err
				}
				if err := d.launch("gru_fwd_step", grid, block1, ptr(o.act), ptr(rec), ptr(b), ptr(hs), ptr(o.rech),
					ptr(out), rows, i64(n), i64(h)); err != nil {
					return err
				}
				continue
			}
			if err := d.stepGemm(false, n, 2*h, h, hs, 0, h, u, 0, g3, 0, rec, 0, g3); err != nil {
				return err
			}
			if err := d.launch("gru_fwd_zr", grid, block1, ptr(o.act), ptr(rec), ptr(b), ptr(hs), ptr(rh),
				rows, i64(n), i64(h)); err != nil {
				return err
			}
			if err := d.stepGemm(false, n, h, h, rh, 0, h, u, 2*h, g3, 0, rec, 2*h, g3); err != nil {
				return err
			}
			if err := d.launch("gru_fwd_h", grid, block1, ptr(o.act), ptr(rec), ptr(b), ptr(hs), ptr(out),
				rows, i64(n), i64(h)); err != nil {
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

// GRU gradient slots, in the order of Backward's need and results.
const (
	gruGradX = iota
	gruGradW
	gruGradU
	gruGradB
	gruGradH0
)

// Backward returns the gradients for the upstream gradient gout
// [total, H] of Forward's output, indexed by GRUGradX ... GRUGradH0, for
// the slots need asks for (nil for the others and for an h0 Forward did
// not get). The formulas are ops.GRUOp's (kernels/rnn.cu, gru_bwd_step).
func (o *gruLauncher) Backward(gout *Buffer, need [5]bool) ([5]*Buffer, error) {
	const op = "gru"
	var g [5]*Buffer
	in := []*Buffer{o.x, o.w, o.u, o.b, o.out, gout}
	if err := o.d.checkInputs(op, in...); err != nil {
		return g, err
	}
	d, s, h, nIn, ra := o.d, o.s, o.h, o.nIn, o.attrs.ResetAfter
	g3 := 3 * h
	shapes := [5]tensor.Shape{{s.total, nIn}, {nIn, g3}, {h, g3}, o.b.shape, {s.batch, h}}
	err := d.do(func() error {
		for i := range g {
			if need[i] && (i != gruGradH0 || o.h0 != nil) {
				var err error
				if g[i], err = d.newBuffer(tensor.Float32, shapes[i]); err != nil {
					return err
				}
			}
		}
		// da, drec: input and recurrent pre-activation gradients per row;
		// hp: the state entering each row's step; dh, step, drh: packed.
		recShape := tensor.Shape{0}
		if ra {
			recShape = tensor.Shape{s.total, g3}
		}
		st, err := d.zeroBuffers(tensor.Shape{s.total, g3}, recShape, tensor.Shape{s.total, h},
			tensor.Shape{s.batch, h}, tensor.Shape{s.batch, g3}, tensor.Shape{s.batch, h})
		if err != nil {
			return err
		}
		defer freeAll(st...)
		da, drec, hp, dh, step, drh := st[0], st[1], st[2], st[3], st[4], st[5]
		if err := d.launch("rnn_prev_states", grid1(s.total*h), block1, ptr(o.out), i64(h), ptr(o.h0), s.prev(),
			ptr(hp), i64(s.total), i64(h)); err != nil {
			return err
		}
		var rech, drecp uint64
		if ra {
			rech, drecp = ptr(o.rech), ptr(drec)
		}
		for t := len(s.active) - 1; t >= 0; t-- {
			n, grid, rows := s.active[t], grid1(s.active[t]*h), s.rows(t)
			if err := d.launch("gru_bwd_step", grid, block1, ptr(o.act), ptr(hp), rech, ptr(gout), ptr(dh), ptr(da),
				drecp, ptr(step), rows, i64(n), i64(h)); err != nil {
				return err
			}
			if ra {
				if err := d.stepGemm(true, n, h, g3, step, 0, g3, o.u, 0, g3, 1, dh, 0, h); err != nil {
					return err
				}
				continue
			}
			if err := d.stepGemm(true, n, h, h, step, 2*h, g3, o.u, 2*h, g3, 0, drh, 0, h); err != nil {
				return err
			}
			if err := d.launch("gru_bwd_reset", grid, block1, ptr(o.act), ptr(hp), ptr(drh), ptr(dh), ptr(da),
				ptr(step), rows, i64(n), i64(h)); err != nil {
				return err
			}
			if err := d.stepGemm(true, n, h, 2*h, step, 0, g3, o.u, 0, g3, 1, dh, 0, h); err != nil {
				return err
			}
		}
		if g[gruGradH0] != nil {
			if err := d.launch("rnn_scatter_rows", grid1(s.batch*h), block1, ptr(dh), s.order(), ptr(g[gruGradH0]), i64(s.batch), i64(h)); err != nil {
				return err
			}
		}
		if err := d.inputGrads(o.x, o.w, da, s.total, nIn, g3, g[gruGradX], g[gruGradW], g[gruGradB]); err != nil {
			return err
		}
		// With reset_after, b is [2, 3H]: its second row is the recurrent
		// bias, whose gradient is Σ_rows drec.
		if db := g[gruGradB]; db != nil && ra {
			if err := d.launch("channel_sum", rowGrid(g3), block1, ptr(drec), elemPtr(db, g3), i64(s.total), i64(g3), i64(1)); err != nil {
				return err
			}
		}
		du := g[gruGradU]
		switch {
		case du == nil:
			return nil
		case ra:
			return d.gemmRows(true, false, h, g3, s.total, hp, 0, h, drec, 0, g3, 0, du, 0, g3)
		}
		if err := d.gemmRows(true, false, h, 2*h, s.total, hp, 0, h, da, 0, g3, 0, du, 0, g3); err != nil {
			return err
		}
		if err := d.launch("gru_reset_prev", grid1(s.total*h), block1, ptr(o.act), ptr(hp), i64(s.total), i64(h)); err != nil {
			return err
		}
		return d.gemmRows(true, false, h, h, s.total, hp, 0, h, da, 2*h, g3, 0, du, 2*h, g3)
	})
	if err != nil {
		freeAll(g[:]...)
		return [5]*Buffer{}, err
	}
	return g, nil
}

// Free releases what Forward saved on the device (the gate activations,
// h·Uh and the schedule); the inputs and the output stay the caller's.
func (o *gruLauncher) Free() {
	freeAll(o.act, o.rech)
	o.s.free()
	o.act, o.rech, o.s = nil, nil, nil
	o.x, o.w, o.u, o.b, o.h0, o.out = nil, nil, nil, nil, nil, nil
}
