package ops

import (
	"slices"
	"sync"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "gru", Inputs: []string{"x", "w", "u", "b", "h0"}, Grads: []int{0, 1, 2, 3, 4},
		Make: MakeOp(GRUOp), CUDA: DeviceKernel})
}

// GRUAttrs are the fused GRU's attributes.
type GRUAttrs struct {
	// Offsets split the rows of x into sequences (see LSTMAttrs.Offsets).
	Offsets []int `json:"offsets"`
	// Reverse processes each sequence from its last step (see LSTMAttrs.Reverse).
	Reverse bool `json:"reverse"`
	// ResetAfter applies the reset gate after the recurrent matmul, with
	// separate input and recurrent biases (Keras reset_after=True, TF2's
	// default and cuDNN's form); false is the original GRU (Cho et al.
	// 2014, Keras reset_after=False).
	ResetAfter bool `json:"reset_after"`
}

// gruOp is the fused GRU over a ragged batch, or (cell) one step of it.
type gruOp struct {
	name  string // "gru" or "gru_cell"
	attrs GRUAttrs
	s     *rnnSchedule
	act   any            // *[]T [total, 3H], a scratch buffer: z, r, h̃ after their nonlinearities
	rech  any            // *[]T [total, H], a scratch buffer: h·Uh + b_rec,h (ResetAfter only)
	pw    *PackedWeights // W packed once by the caller (GRUCellPackedOp), or nil
	pu    *PackedWeights // U likewise (ResetAfter only: the other form packs U's blocks apart)
	// blocks is U's blocks packed once without ResetAfter
	// (PackRecurrentWeights), or nil.
	blocks *gruBlocks
}

// GRUOp returns the fused GRU over a ragged batch. Inputs, in order:
//
//	x [total, In]   every step of every sequence (rows split by attrs.Offsets)
//	W [In, 3H]      input kernel, gate blocks z, r, h̃ (Keras' order)
//	U [H, 3H]       recurrent kernel, same blocks
//	b               [2, 3H] (input bias row, recurrent bias row) with
//	                ResetAfter, else [3H]
//	h0 [B, H]       optional initial state (zeros without)
//
// Per step, Keras GRUCell's formulas: with ResetAfter (reset_after=True)
//
//	z = σ(x·Wz + bz + h·Uz + b'z)    r = σ(x·Wr + br + h·Ur + b'r)
//	h̃ = tanh(x·Wh + bh + r∘(h·Uh + b'h))
//
// (b the input row of the bias, b' the recurrent row), and without it
// (reset_after=False)
//
//	z = σ(x·Wz + h·Uz + bz)    r = σ(x·Wr + h·Ur + br)
//	h̃ = tanh(x·Wh + (r∘h)·Uh + bh)
//
// and in both h' = z∘h + (1-z)∘h̃. The output is h' per row, [total, H],
// with x's offsets; each sequence's final state is RNNFinalStateOp of it.
//
// The kernel is LSTMOp's: one GEMM for every step's x·W, then per step the
// recurrent GEMM(s) over the sequences still running (sorted by length, no
// padding; see rnnSchedule) and a fused gate kernel; without ResetAfter a
// step takes two GEMMs, h·[Uz Ur] and then (r∘h)·Uh.
func GRUOp(attrs GRUAttrs) Op {
	attrs.Offsets = slices.Clone(attrs.Offsets) // Backward reads them: the caller may reuse its slice
	return &gruOp{name: "gru", attrs: attrs}
}

// GRU runs the fused GRU; h0 may be nil. See GRUOp.
func GRU(x, w, u, b, h0 *tensor.Tensor, attrs GRUAttrs) (*tensor.Tensor, error) {
	if h0 == nil {
		return run(GRUOp(attrs), x, w, u, b)
	}
	return run(GRUOp(attrs), x, w, u, b, h0)
}

func (o *gruOp) Name() string { return o.name }

// gruInputs names the inputs by role; h0 is nil when left out.
type gruInputs struct{ x, w, u, b, h0 *tensor.Tensor }

// roles maps the inputs (or their gradients) to roles: the fused op's order
// is x, W, U, b, [h0]; the cell's is x, h, W, U, b.
func (o *gruOp) roles(in []*tensor.Tensor) gruInputs {
	if o.name == "gru_cell" {
		return gruInputs{in[0], in[2], in[3], in[4], in[1]}
	}
	r := gruInputs{x: in[0], w: in[1], u: in[2], b: in[3]}
	if len(in) == 5 {
		r.h0 = in[4]
	}
	return r
}

// Check is gru's and gru_cell's device-free check (Checker).
func (o *gruOp) Check(in []*tensor.Tensor) error {
	c := *o // a cell's validate sets its offsets
	s := schedules.Get().(*rnnSchedule)
	defer schedules.Put(s)
	_, _, _, err := c.validate(in, checkShapes, s)
	return err
}

// validate checks the inputs (count and dtype with checkDType, then
// shapes, attributes and offsets), makes s their schedule and returns
// their roles and sizes. A cell's offsets are s's buffer.
func (o *gruOp) validate(in []*tensor.Tensor, checkDType func(string, []*tensor.Tensor, int) (tensor.DType, error), s *rnnSchedule) (gruInputs, int, int, error) {
	var r gruInputs
	switch {
	case o.name == "gru_cell" && len(in) != 5:
		return r, 0, 0, Errorf(o.name, in, "want inputs x, h, W, U, b")
	case len(in) != 4 && len(in) != 5:
		return r, 0, 0, Errorf(o.name, in, "want inputs x, W, U, b and optional h0")
	}
	if _, err := checkDType(o.name, in, len(in)); err != nil {
		return r, 0, 0, err
	}
	r = o.roles(in)
	if o.name == "gru_cell" {
		o.attrs.Offsets = s.cellOffsets(r.x)
	}
	if r.x.Rank() != 2 || r.w.Rank() != 2 || r.w.Dim(0) != r.x.Dim(1) || r.w.Dim(1)%3 != 0 {
		return r, 0, 0, Errorf(o.name, in, "want x [rows, In] and W [In, 3H] with matching In")
	}
	nIn, h := r.x.Dim(1), r.w.Dim(1)/3
	if !r.u.Shape().Equal(tensor.Shape{h, 3 * h}) {
		return r, 0, 0, Errorf(o.name, in, "want U [%d %d] for W [%d %d]", h, 3*h, nIn, 3*h)
	}
	if o.attrs.ResetAfter && !r.b.Shape().Equal(tensor.Shape{2, 3 * h}) {
		return r, 0, 0, Errorf(o.name, in, "want bias [2 %d] (input, recurrent) with reset_after", 3*h)
	}
	if !o.attrs.ResetAfter && !r.b.Shape().Equal(tensor.Shape{3 * h}) {
		return r, 0, 0, Errorf(o.name, in, "want bias [%d] without reset_after", 3*h)
	}
	bs := len(o.attrs.Offsets) - 1
	if r.h0 != nil && !r.h0.Shape().Equal(tensor.Shape{bs, h}) {
		return r, 0, 0, Errorf(o.name, in, "want state h [%d %d] for a batch of %d", bs, h, bs)
	}
	return r, nIn, h, s.init(o.name, in, r.x, o.attrs.Offsets, o.attrs.Reverse)
}

func (o *gruOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	s := new(rnnSchedule) // kept for Backward
	r, nIn, h, err := o.validate(in, checkFloat, s)
	if err != nil {
		return nil, err
	}
	o.s = s
	o.Free() // a second Forward of the same op
	out := tensor.Empty(in[0].DType(), r.x.Dim(0), h)
	o.act, o.rech = o.into(s, nIn, h, o.attrs.ResetAfter, r, out)
	return out, nil
}

// ForwardInto is the GRU ops' Into. A cell's validate sets its offsets
// from x, so it validates a copy of the op and o stays unchanged; the
// activations, which only Backward reads, go back to scratch. The
// schedule comes from a pool, and with W and U packed once
// (PackRecurrentWeights) a call allocates nothing after the first.
func (o *gruOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	c := *o
	s := schedules.Get().(*rnnSchedule)
	defer schedules.Put(s)
	r, nIn, h, err := c.validate(in, checkFloat, s)
	if err != nil {
		return err
	}
	if err := checkOut(o.name, in, out, in[0].DType(), r.x.Dim(0), h); err != nil {
		return err
	}
	putSaved(o.into(s, nIn, h, c.attrs.ResetAfter, r, out))
	return nil
}

// into runs gruSaved in out's dtype, with the op's packed weights where
// they are the inputs', writing every row of out.
func (o *gruOp) into(s *rnnSchedule, nIn, h int, resetAfter bool, r gruInputs, out *tensor.Tensor) (act, rech any) {
	if out.DType() == tensor.Float32 {
		zr, uh := gruBlocksAs[float32](o.blocks, r.u)
		return gruSaved(s, h, resetAfter, gruData[float32](r), out.Float32s(), nIn, packedAs[float32](o.pw, r.w), packedAs[float32](o.pu, r.u), zr, uh)
	}
	zr, uh := gruBlocksAs[float64](o.blocks, r.u)
	return gruSaved(s, h, resetAfter, gruData[float64](r), out.Float64s(), nIn, packedAs[float64](o.pw, r.w), packedAs[float64](o.pu, r.u), zr, uh)
}

// gruSaved runs gruForward into scratch buffers and returns them, the
// state Backward reads (rech nil without reset_after).
func gruSaved[T tensor.Float](s *rnnSchedule, h int, resetAfter bool, d gruSlices[T], out []T, nIn int, pw, pu, puzr, puh *gemm.PackedB[T]) (act, rech any) {
	total := s.off[len(s.off)-1]
	a := getScratch[T](total * 3 * h)
	var rh []T
	if resetAfter {
		r := getScratch[T](total * h)
		rech, rh = r, *r
	}
	gruForward(s, nIn, h, d, out, *a, rh, pw, pu, puzr, puh)
	return a, rech
}

// Free gives the activations that Forward saved for Backward back to the
// kernels' scratch pool (ops.Freer): graph.Tape calls it once the op's
// backward has run, or right after Forward when it records nothing.
func (o *gruOp) Free() {
	putSaved(o.act, o.rech)
	o.act, o.rech = nil, nil
}

type gruSlices[T tensor.Float] struct{ x, w, u, b, h0 []T }

func gruData[T tensor.Float](r gruInputs) gruSlices[T] {
	return gruSlices[T]{floats[T](r.x), floats[T](r.w), floats[T](r.u), floats[T](r.b), floats[T](r.h0)}
}

// gruForward writes h' per row into out [total, H], the gate activations
// into act [total, 3H] (first x·W, then the activations; the input bias b
// is added as a step reads each row) and, when rech is not nil
// (reset_after), h·Uh + b'h into rech [total, H]; every row of each is
// written.
func gruForward[T tensor.Float](s *rnnSchedule, nIn, h int, d gruSlices[T], out, act, rech []T, pw, pu, puzr, puh *gemm.PackedB[T]) {
	total, g3, bs := s.off[len(s.off)-1], 3*h, s.batch()
	resetAfter := rech != nil
	if pw != nil { // x·W; the bias joins as each step reads a row
		gemm.GemmPacked(false, total, 1, d.x, nIn, pw, 0, act, g3)
	} else {
		gemm.Gemm(false, false, total, g3, nIn, 1, d.x, nIn, d.w, g3, 0, act, g3)
	}
	hsp, recp, rhp := getScratch[T](bs*h), getScratch[T](bs*g3), getScratch[T](bs*h)
	defer putScratch(hsp)
	defer putScratch(recp)
	defer putScratch(rhp)
	hs, rec, rh := *hsp, *recp, *rhp
	clear(hs)
	clear(rec)
	clear(rh)
	sortRows(s, h, hs, d.h0)
	var u, uzr, uh *gemm.PackedB[T] // the recurrent weights' blocks, packed once for all steps
	switch {
	case resetAfter && pu != nil:
		u = pu
	case resetAfter:
		u = gemm.PackB(false, h, g3, d.u, g3)
	case puzr != nil:
		uzr, uh = puzr, puh
	default:
		uzr, uh = gemm.PackB(false, h, 2*h, d.u, g3), gemm.PackB(false, h, h, d.u[2*h:], g3)
	}
	i := floatIndex[T]()
	f := getPass[gruFwd[T]](&gruFwdPools, i)
	defer putPass(&gruFwdPools, i, f)
	*f = gruFwd[T]{s: s, h: h, d: d, u: u, uzr: uzr, uh: uh, hs: hs, rec: rec, rh: rh, out: out, act: act, rech: rech}
	eachRun(&f.rnnDriver, f, s, total*g3*h, true)
}

// gruFwd is gruForward's pass (rnnPass): its operands (u the packed U with
// reset_after, else uzr and uh its blocks) and the step state hs (the
// active sequences' h, in the schedule's order), rec (their recurrent
// products) and rh (r∘h, without reset_after).
type gruFwd[T tensor.Float] struct {
	rnnDriver
	s                           *rnnSchedule
	h                           int
	d                           gruSlices[T]
	u, uzr, uh                  *gemm.PackedB[T]
	hs, rec, rh, out, act, rech []T
}

var gruFwdPools, gruBwdPools [2]sync.Pool

// run takes run r of the batch through every step.
func (f *gruFwd[T]) run(r rnnRun) {
	s, h, g3, resetAfter := f.s, f.h, 3*f.h, f.rech != nil
	for t := range s.active {
		n := r.active(s, t)
		if n == 0 {
			return
		}
		if resetAfter { // rec = h·U + b'
			for j := r.lo; j < r.lo+n; j++ {
				copy(f.rec[j*g3:(j+1)*g3], f.d.b[g3:])
			}
			runGemm(r, n, f.hs, h, f.u, 1, f.rec, g3)
		} else { // rec[:, :2H] = h·[Uz Ur]; rec[:, 2H:] = (r∘h)·Uh below
			runGemm(r, n, f.hs, h, f.uzr, 0, f.rec, g3)
		}
		r.each(0, t, n, gateWork*h)
		if !resetAfter {
			runGemm(r, n, f.rh, h, f.uh, 0, f.rec[2*h:], g3)
		}
		r.each(1, t, n, gateWork*h)
	}
}

// rows runs phase 0 (the z and r gates, and r∘h without reset_after) or
// phase 1 (the candidate h̃ and h') of sequences [lo, hi) at step t.
func (f *gruFwd[T]) rows(phase, t, lo, hi int) {
	s, h, g3, resetAfter, b := f.s, f.h, 3*f.h, f.rech != nil, f.d.b[:3*f.h]
	for j := lo; j < hi; j++ {
		row := s.row(j, t)
		a, rc := f.act[row*g3:], f.rec[j*g3:(j+1)*g3]
		if phase == 0 {
			zr := a[:2*h] // z and r, through the vector sigmoid in place
			vec.Sum(zr, zr, b[:2*h])
			vec.Add(zr, rc[:2*h])
			vec.Sigmoid(zr, zr)
			if !resetAfter {
				for k := 0; k < h; k++ {
					f.rh[j*h+k] = a[h+k] * f.hs[j*h+k]
				}
			}
			continue
		}
		hj := f.hs[j*h : (j+1)*h]
		for k := 0; k < h; k++ {
			pre := float64(a[2*h+k] + b[2*h+k])
			if resetAfter {
				pre += float64(a[h+k]) * float64(rc[2*h+k])
				f.rech[row*h+k] = rc[2*h+k]
			} else {
				pre += float64(rc[2*h+k])
			}
			a[2*h+k] = T(pre)
		}
		vec.Tanh(a[2*h:3*h], a[2*h:3*h]) // h̃, through the vector tanh in place
		for k := 0; k < h; k++ {
			hh, z := float64(a[2*h+k]), float64(a[k])
			hj[k] = T(z*float64(hj[k]) + (1-z)*hh)
		}
		copy(f.out[row*h:(row+1)*h], hj)
	}
}

func (o *gruOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	if o.act == nil {
		return nil, Errorf(o.name, in, "backward without the activations of a forward (never run, or freed)")
	}
	grads := wantedGrads(in, need)
	r, g := o.roles(in), o.roles(grads)
	h := r.u.Dim(0)
	switch out.DType() {
	case tensor.Float32:
		gruBackward(o.s, r.x.Dim(1), h, gruData[float32](r), out.Float32s(), gout.Float32s(), *o.act.(*[]float32), savedOrNil[float32](o.rech), gruData[float32](g))
	case tensor.Float64:
		gruBackward(o.s, r.x.Dim(1), h, gruData[float64](r), out.Float64s(), gout.Float64s(), *o.act.(*[]float64), savedOrNil[float64](o.rech), gruData[float64](g))
	}
	return grads, nil
}

// savedOrNil returns the scratch buffer b holds, or nil.
func savedOrNil[T tensor.Float](b any) []T {
	if p, ok := b.(*[]T); ok {
		return *p
	}
	return nil
}

// gruBackward back-propagates through time. Per step, with δh the
// gradient reaching h' and hp the state entering the step:
//
//	δz = δh∘(hp - h̃)∘z(1-z)    δh̃ = δh∘(1-z)∘(1-h̃²)
//	reset_after:  δr = δh̃∘(hp·Uh + b'h)∘r(1-r); the recurrent pre-activation
//	              gradient is [δz δr δh̃∘r], and δhp = δh∘z + it·Uᵀ
//	otherwise:    δ(r∘hp) = δh̃·Uhᵀ, δr = δ(r∘hp)∘hp∘r(1-r),
//	              δhp = δh∘z + δ(r∘hp)∘r + [δz δr]·[Uz Ur]ᵀ
//
// and the input pre-activation gradient δA = [δz δr δh̃] gives dx = δA·Wᵀ,
// dW = xᵀ·δA and the input bias gradient Σ δA.
func gruBackward[T tensor.Float](s *rnnSchedule, nIn, h int, d gruSlices[T], out, gout, act, rech []T, gr gruSlices[T]) {
	total, g3, bs := s.off[len(s.off)-1], 3*h, s.batch()
	resetAfter := rech != nil
	hpBuf := getScratch[T](total * h) // the states entering each step, every row written
	defer putScratch(hpBuf)
	hp := *hpBuf
	prevStates(s, h, out, h, d.h0, hp)
	daBuf := getScratch[T](total * g3) // input pre-activation gradients, every row written
	defer putScratch(daBuf)
	da := *daBuf
	var drec []T // recurrent pre-activation gradients (reset_after), every row written
	if resetAfter {
		b := getScratch[T](total * g3)
		defer putScratch(b)
		drec = *b
	}
	dhp, stepp, drhp := getScratch[T](bs*h), getScratch[T](bs*g3), getScratch[T](bs*h)
	defer putScratch(dhp)
	defer putScratch(stepp)
	defer putScratch(drhp)
	dh, step, drh := *dhp, *stepp, *drhp
	clear(dh) // δh starts at zero beyond each sequence's last step
	clear(step)
	clear(drh)
	var ut, uzrt, uht *gemm.PackedB[T] // transposed blocks of U, packed once for all steps
	if resetAfter {
		ut = gemm.PackB(true, g3, h, d.u, g3)
	} else {
		uzrt, uht = gemm.PackB(true, 2*h, h, d.u, g3), gemm.PackB(true, h, h, d.u[2*h:], g3)
	}
	i := floatIndex[T]()
	b := getPass[gruBwd[T]](&gruBwdPools, i)
	defer putPass(&gruBwdPools, i, b)
	*b = gruBwd[T]{s: s, h: h, act: act, gout: gout, hp: hp, rech: rech, ut: ut, uzrt: uzrt, uht: uht, dh: dh, step: step, drh: drh, da: da, drec: drec}
	eachRun(&b.rnnDriver, b, s, total*g3*h, true)
	unsortRows(s, h, gr.h0, dh)
	if gr.x != nil {
		gemm.Gemm(false, true, total, nIn, g3, 1, da, g3, d.w, g3, 0, gr.x, nIn)
	}
	if gr.w != nil {
		gemm.Gemm(true, false, nIn, g3, total, 1, d.x, nIn, da, g3, 0, gr.w, g3)
	}
	if gr.b != nil {
		sumRows(gr.b[:g3], da, total, g3)
		if resetAfter {
			sumRows(gr.b[g3:], drec, total, g3)
		}
	}
	if gr.u == nil || total == 0 { // no rows: dU stays zero (and da[2H:] would be out of range)
		return
	}
	if resetAfter {
		gemm.Gemm(true, false, h, g3, total, 1, hp, h, drec, g3, 0, gr.u, g3)
		return
	}
	gemm.Gemm(true, false, h, 2*h, total, 1, hp, h, da, g3, 0, gr.u, g3)
	for r := 0; r < total; r++ { // hp becomes r∘hp, the input of Uh
		for k := 0; k < h; k++ {
			hp[r*h+k] *= act[r*g3+h+k]
		}
	}
	gemm.Gemm(true, false, h, h, total, 1, hp, h, da[2*h:], g3, 0, gr.u[2*h:], g3)
}

// gruBwd is gruBackward's pass (rnnPass): its operands (ut the packed Uᵀ
// with reset_after, else uzrt and uht its blocks'), δh of the active
// sequences (dh, in the schedule's order), the step's recurrent
// pre-activation gradients (step) and δ(r∘h) (drh, without reset_after),
// and the pre-activation gradients of every row, da and (reset_after)
// drec.
type gruBwd[T tensor.Float] struct {
	rnnDriver
	s                                            *rnnSchedule
	h                                            int
	act, gout, hp, rech, dh, step, drh, da, drec []T
	ut, uzrt, uht                                *gemm.PackedB[T]
}

// run takes run r of the batch back through every step, writing the
// pre-activation gradients of its rows into da and, with reset_after,
// drec.
func (b *gruBwd[T]) run(r rnnRun) {
	s, h, g3, resetAfter := b.s, b.h, 3*b.h, b.rech != nil
	for t := len(s.active) - 1; t >= 0; t-- {
		n := r.active(s, t)
		if n == 0 {
			continue
		}
		r.each(0, t, n, gateWork*h)
		if resetAfter {
			runGemm(r, n, b.step, g3, b.ut, 1, b.dh, h)
			continue
		}
		runGemm(r, n, b.step[2*h:], g3, b.uht, 0, b.drh, h)
		r.each(1, t, n, gateWork*h)
		runGemm(r, n, b.step, g3, b.uzrt, 1, b.dh, h)
	}
}

// rows runs phase 0 (the gates' gradients) or phase 1 (without
// reset_after: δr and δh through r∘h) of sequences [lo, hi) at step t.
func (b *gruBwd[T]) rows(phase, t, lo, hi int) {
	s, h, g3, resetAfter := b.s, b.h, 3*b.h, b.rech != nil
	act, gout, hp, rech, dh, step, da, drec := b.act, b.gout, b.hp, b.rech, b.dh, b.step, b.da, b.drec
	for j := lo; j < hi; j++ {
		row := s.row(j, t)
		if phase == 1 {
			for k := 0; k < h; k++ {
				rg, drhk := float64(act[row*g3+h+k]), float64(b.drh[j*h+k])
				step[j*g3+h+k] = T(drhk * float64(hp[row*h+k]) * rg * (1 - rg))
				dh[j*h+k] += T(drhk * rg)
			}
			copy(da[row*g3:(row+1)*g3], step[j*g3:(j+1)*g3])
			continue
		}
		a, st := act[row*g3:(row+1)*g3], step[j*g3:(j+1)*g3]
		if resetAfter {
			// da's row takes δz, δr, δh̃; drec's row and the step's (the
			// recurrent product's input) the same with the recurrent h̃
			// block δh̃∘r.
			dar, drr := da[row*g3:(row+1)*g3], drec[row*g3:(row+1)*g3]
			for k := 0; k < h; k++ {
				z, rg, hh := float64(a[k]), float64(a[h+k]), float64(a[2*h+k])
				dhk := float64(dh[j*h+k]) + float64(gout[row*h+k])
				dz := T(dhk * (float64(hp[row*h+k]) - hh) * z * (1 - z))
				dhh := dhk * (1 - z) * (1 - hh*hh)
				dr := T(dhh * float64(rech[row*h+k]) * rg * (1 - rg))
				dh[j*h+k] = T(dhk * z)
				rdhh := T(dhh) * a[h+k]
				dar[k], dar[h+k], dar[2*h+k] = dz, dr, T(dhh)
				drr[k], drr[h+k], drr[2*h+k] = dz, dr, rdhh
				st[k], st[h+k], st[2*h+k] = dz, dr, rdhh
			}
			continue
		}
		for k := 0; k < h; k++ {
			z, hh := float64(a[k]), float64(a[2*h+k])
			dhk := float64(dh[j*h+k]) + float64(gout[row*h+k])
			dz := dhk * (float64(hp[row*h+k]) - hh) * z * (1 - z)
			dhh := dhk * (1 - z) * (1 - hh*hh)
			st[k], st[2*h+k] = T(dz), T(dhh)
			dh[j*h+k] = T(dhk * z)
		}
	}
}
