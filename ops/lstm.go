package ops

import (
	"slices"
	"sync"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "lstm", Inputs: []string{"x", "w", "u", "b", "peephole", "h0", "c0"}, Grads: []int{0, 1, 2, 3, 4, 5, 6},
		Make: MakeOp(LSTMOp), CUDA: DeviceKernel})
}

// LSTMAttrs are the fused LSTM's attributes.
type LSTMAttrs struct {
	// Offsets split the rows of x into sequences (a ragged batch: sequence
	// q is rows Offsets[q] to Offsets[q+1]; see tensor.Ragged).
	Offsets []int `json:"offsets"`
	// Reverse processes each sequence from its last step to its first
	// (Keras go_backwards), writing each step's output at the row of its
	// input, so outputs stay aligned with the inputs.
	Reverse bool `json:"reverse"`
	// Candidate is the candidate's activation g and Cell the cell
	// output's, tanh(c') in h' = o∘tanh(c') (tanh when zero; Paddle's
	// candidate_activation and cell_activation).
	// Not in the goldens, which record TensorFlow's tanh LSTM.
	Candidate RNNActivation `json:"-"`
	Cell      RNNActivation `json:"-"`
}

// lstmOp is the fused LSTM over a ragged batch, or (cell) one step of it.
type lstmOp struct {
	name  string // "lstm" or "lstm_cell"
	attrs LSTMAttrs
	s     *rnnSchedule
	act   any // *[]T [total, 4H], a scratch buffer: i, f, g, o after their nonlinearities, for Backward
	// pw and pu are W and U packed once (PackRecurrentWeights), used
	// where they pack the W and U a call is given; nil packs per call.
	pw, pu *PackedWeights
}

// LSTMOp returns the fused LSTM over a ragged batch. Inputs, in order:
//
//	x [total, In]   every step of every sequence (rows split by attrs.Offsets)
//	W [In, 4H]      input kernel, gate blocks i, f, c (g), o (Keras, cuDNN)
//	U [H, 4H]       recurrent kernel, same gate blocks
//	b [4H]          bias, same gate blocks
//	peephole [3H]   optional diagonal peephole weights for i, f, o
//	h0, c0 [B, H]   optional initial state, both or neither (zeros without)
//
// so 4, 5 (peephole), 6 (h0, c0) or 7 inputs. Per step, with x·W, h·U
// split into the gate blocks (Hochreiter & Schmidhuber 1997 with the forget
// gate of Gers et al. 2000; Keras LSTMCell; peepholes as TF's
// LSTMCell(use_peepholes=True) and Paddle's lstm, Gers & Schmidhuber 2000):
//
//	i = σ(x·Wi + h·Ui + bi + pi∘c)    f = σ(x·Wf + h·Uf + bf + pf∘c)
//	g = tanh(x·Wc + h·Uc + bc)        c' = f∘c + i∘g
//	o = σ(x·Wo + h·Uo + bo + po∘c')   h' = o∘tanh(c')
//
// where attrs.Candidate replaces the tanh of g and attrs.Cell that of h'
// (Paddle's dynamic_lstm candidate_activation and cell_activation).
//
// The output is [total, 2H]: row r holds h' (columns [0, H)) and c'
// (columns [H, 2H)) after the step of row r, so the per-step hidden states
// keep x's offsets. Each sequence's final (h, c) is RNNFinalStateOp of this
// output (with concat(h0, c0) as its init), which the graph wrapper does.
//
// The kernel does one GEMM for every step's input projection x·W + b at
// once, then per time step one GEMM h·U over the sequences still running
// and a fused gate kernel. Sequences are not padded: they are sorted by
// length and step t runs only the active[t] longest (see rnnSchedule), so
// lengths 0 and 1 cost nothing extra. Backward runs through time with one
// GEMM per step for dh, then three whole-batch GEMMs for dx, dW and dU.
func LSTMOp(attrs LSTMAttrs) Op {
	attrs.Offsets = slices.Clone(attrs.Offsets) // Backward reads them: the caller may reuse its slice
	return &lstmOp{name: "lstm", attrs: attrs}
}

// LSTM runs the fused LSTM; peephole, h0 and c0 may be nil (h0 and c0
// together). See LSTMOp.
func LSTM(x, w, u, b, peephole, h0, c0 *tensor.Tensor, attrs LSTMAttrs) (*tensor.Tensor, error) {
	in := []*tensor.Tensor{x, w, u, b}
	if peephole != nil {
		in = append(in, peephole)
	}
	if h0 != nil || c0 != nil {
		in = append(in, h0, c0)
	}
	return run(LSTMOp(attrs), in...)
}

func (o *lstmOp) Name() string { return o.name }

// lstmInputs names the inputs by role; nil where left out.
type lstmInputs struct{ x, w, u, b, p, h0, c0 *tensor.Tensor }

// roles maps the n inputs (or their gradients) to their roles: the fused
// op's order is x, W, U, b, [peephole], [h0, c0]; the cell's is x, h, c,
// W, U, b, [peephole].
func (o *lstmOp) roles(in []*tensor.Tensor) lstmInputs {
	var idx [7]int // x, w, u, b, p, h0, c0; -1 where left out
	switch n := len(in); {
	case o.name == "lstm_projected" && n == 3:
		idx = [7]int{0, -1, 1, 2, -1, -1, -1}
	case o.name == "lstm_projected":
		idx = [7]int{0, -1, 1, 2, 3, -1, -1}
	case o.name == "lstm_cell" && n == 6:
		idx = [7]int{0, 3, 4, 5, -1, 1, 2}
	case o.name == "lstm_cell":
		idx = [7]int{0, 3, 4, 5, 6, 1, 2}
	case n == 4:
		idx = [7]int{0, 1, 2, 3, -1, -1, -1}
	case n == 5:
		idx = [7]int{0, 1, 2, 3, 4, -1, -1}
	case n == 6:
		idx = [7]int{0, 1, 2, 3, -1, 4, 5}
	default:
		idx = [7]int{0, 1, 2, 3, 4, 5, 6}
	}
	var r [7]*tensor.Tensor
	for k, i := range idx {
		if i >= 0 {
			r[k] = in[i]
		}
	}
	return lstmInputs{r[0], r[1], r[2], r[3], r[4], r[5], r[6]}
}

// check validates the roles' shapes, naming o's op and the inputs in as the
// user passed them; it returns In and H.
func (o *lstmOp) check(in []*tensor.Tensor, r lstmInputs) (nIn, h int, err error) {
	switch {
	case r.w == nil && (r.x.Rank() != 2 || r.x.Dim(1)%4 != 0):
		return 0, 0, Errorf(o.name, in, "want x [rows, 4H], the gates' input projections")
	case r.w == nil:
		nIn, h = r.x.Dim(1), r.x.Dim(1)/4
	case r.x.Rank() != 2 || r.w.Rank() != 2 || r.w.Dim(0) != r.x.Dim(1) || r.w.Dim(1)%4 != 0:
		return 0, 0, Errorf(o.name, in, "want x [rows, In] and W [In, 4H] with matching In")
	default:
		nIn, h = r.x.Dim(1), r.w.Dim(1)/4
	}
	if !r.u.Shape().Equal(tensor.Shape{h, 4 * h}) {
		return 0, 0, Errorf(o.name, in, "want U [%d %d] for W [%d %d]", h, 4*h, nIn, 4*h)
	}
	if !r.b.Shape().Equal(tensor.Shape{4 * h}) {
		return 0, 0, Errorf(o.name, in, "want bias [%d]", 4*h)
	}
	if r.p != nil && !r.p.Shape().Equal(tensor.Shape{3 * h}) {
		return 0, 0, Errorf(o.name, in, "want peephole [%d] (i, f, o)", 3*h)
	}
	bs := len(o.attrs.Offsets) - 1
	for _, s := range []*tensor.Tensor{r.h0, r.c0} {
		if s != nil && !s.Shape().Equal(tensor.Shape{bs, h}) {
			return 0, 0, Errorf(o.name, in, "want states h, c [%d %d] for a batch of %d", bs, h, bs)
		}
	}
	return nIn, h, nil
}

// Check is the LSTM ops' device-free check (Checker).
func (o *lstmOp) Check(in []*tensor.Tensor) error {
	c := *o // a cell's validate sets its offsets
	s := schedules.Get().(*rnnSchedule)
	defer schedules.Put(s)
	_, _, _, err := c.validate(in, checkShapes, s)
	return err
}

// validate checks the inputs (count and dtype with checkDType, then
// shapes, attributes and offsets), makes s their schedule and returns
// their roles and sizes. A cell's offsets are s's buffer.
func (o *lstmOp) validate(in []*tensor.Tensor, checkDType func(string, []*tensor.Tensor, int) (tensor.DType, error), s *rnnSchedule) (lstmInputs, int, int, error) {
	var r lstmInputs
	switch {
	case o.name == "lstm_projected" && len(in) != 3 && len(in) != 4:
		return r, 0, 0, Errorf(o.name, in, "want inputs x, U, b and optional peephole")
	case o.name == "lstm_cell" && len(in) != 6 && len(in) != 7:
		return r, 0, 0, Errorf(o.name, in, "want inputs x, h, c, W, U, b and optional peephole")
	case o.name == "lstm" && (len(in) < 4 || len(in) > 7):
		return r, 0, 0, Errorf(o.name, in, "want inputs x, W, U, b, optional peephole, optional h0 and c0")
	}
	if _, err := checkDType(o.name, in, len(in)); err != nil {
		return r, 0, 0, err
	}
	r = o.roles(in)
	if o.name == "lstm_cell" {
		o.attrs.Offsets = s.cellOffsets(r.x)
	}
	nIn, h, err := o.check(in, r)
	if err != nil {
		return r, 0, 0, err
	}
	if !o.attrs.Candidate.valid() || !o.attrs.Cell.valid() {
		return r, 0, 0, Errorf(o.name, in, "unknown activations %v, %v", o.attrs.Candidate, o.attrs.Cell)
	}
	return r, nIn, h, s.init(o.name, in, r.x, o.attrs.Offsets, o.attrs.Reverse)
}

func (o *lstmOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	s := new(rnnSchedule) // kept for Backward
	r, nIn, h, err := o.validate(in, checkFloat, s)
	if err != nil {
		return nil, err
	}
	o.s = s
	o.Free() // a second Forward of the same op
	out := tensor.Empty(in[0].DType(), r.x.Dim(0), 2*h)
	o.act = o.into(s, nIn, h, o.attrs, r, out)
	return out, nil
}

// ForwardInto is the LSTM ops' Into. A cell's validate sets its offsets
// from x, so it validates a copy of the op and o stays unchanged; the gate
// activations, which only Backward reads, go back to scratch.
//
// The schedule comes from a pool, and with U packed once
// (PackRecurrentWeights) a call allocates nothing after the first.
func (o *lstmOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	c := *o
	s := schedules.Get().(*rnnSchedule)
	defer schedules.Put(s)
	r, nIn, h, err := c.validate(in, checkFloat, s)
	if err != nil {
		return err
	}
	if err := checkOut(o.name, in, out, in[0].DType(), r.x.Dim(0), 2*h); err != nil {
		return err
	}
	putSaved(o.into(s, nIn, h, c.attrs, r, out))
	return nil
}

// into runs lstmForward into out, every row of which it writes, with the
// op's packings where they pack the inputs' W and U, and returns the gate
// activations' scratch buffer (*[]T).
func (o *lstmOp) into(s *rnnSchedule, nIn, h int, a LSTMAttrs, r lstmInputs, out *tensor.Tensor) any {
	rows := s.off[len(s.off)-1] * 4 * h
	if out.DType() == tensor.Float32 {
		act := getScratch[float32](rows)
		lstmForward(s, nIn, h, a, lstmData[float32](r), out.Float32s(), *act, packedAs[float32](o.pw, r.w), packedAs[float32](o.pu, r.u))
		return act
	}
	act := getScratch[float64](rows)
	lstmForward(s, nIn, h, a, lstmData[float64](r), out.Float64s(), *act, packedAs[float64](o.pw, r.w), packedAs[float64](o.pu, r.u))
	return act
}

// Free gives the gate activations that Forward saved for Backward back to
// the kernels' scratch pool (ops.Freer): graph.Tape calls it once the op's
// backward has run, or right after Forward when it records nothing, so a
// step does not keep every layer's [total, 4H] activations to the end nor
// allocate them afresh.
func (o *lstmOp) Free() {
	putSaved(o.act)
	o.act = nil
}

// putSaved gives scratch buffers (*[]float32 or *[]float64; nil skipped)
// back to the pool.
func putSaved(bufs ...any) {
	for _, b := range bufs {
		switch b := b.(type) {
		case *[]float32:
			putScratch(b)
		case *[]float64:
			putScratch(b)
		}
	}
}

// lstmSlices holds the roles' data; nil where left out.
type lstmSlices[T tensor.Float] struct{ x, w, u, b, p, h0, c0 []T }

func lstmData[T tensor.Float](r lstmInputs) lstmSlices[T] {
	return lstmSlices[T]{floats[T](r.x), floats[T](r.w), floats[T](r.u), floats[T](r.b), floats[T](r.p), floats[T](r.h0), floats[T](r.c0)}
}

// lstmForward writes h', c' per row into out [total, 2H] and the gate
// activations into act [total, 4H] (first x·W, then the activations),
// with W and U from their packings pw and pu where not nil. A step's
// pre-activations are x·W + b + h·U, the bias added as each row is
// gathered for the step.
func lstmForward[T tensor.Float](s *rnnSchedule, nIn, h int, a LSTMAttrs, d lstmSlices[T], out, act []T, pw, pu *gemm.PackedB[T]) {
	total, g4 := s.off[len(s.off)-1], 4*h
	xw := d.x // x holds the projections (lstm_projected)
	switch {
	case d.w != nil && pw != nil:
		gemm.GemmPacked(false, total, 1, d.x, nIn, pw, 0, act, g4)
		xw = act
	case d.w != nil:
		gemm.Gemm(false, false, total, g4, nIn, 1, d.x, nIn, d.w, g4, 0, act, g4)
		xw = act
	}
	bs := s.batch()
	hsp, csp, zp := getScratch[T](bs*h), getScratch[T](bs*h), getScratch[T](bs*g4)
	defer putScratch(hsp)
	defer putScratch(csp)
	defer putScratch(zp)
	hs, cs, z := *hsp, *csp, *zp
	clear(hs)
	clear(cs)
	sortRows(s, h, hs, d.h0)
	sortRows(s, h, cs, d.c0)
	if pu == nil {
		pu = gemm.PackB(false, h, g4, d.u, g4) // once for all steps
	}
	i := floatIndex[T]()
	f := getPass[lstmFwd[T]](&lstmFwdPools, i)
	defer putPass(&lstmFwdPools, i, f)
	*f = lstmFwd[T]{s: s, h: h, a: a, d: d, xw: xw, u: pu, hs: hs, cs: cs, z: z, out: out, act: act}
	eachRun(&f.rnnDriver, f, s, total*g4*h, true)
}

// lstmFwd is lstmForward's pass (rnnPass): its operands and the step
// state hs, cs (the active sequences' h and c, in the schedule's order)
// and z (their pre-activations).
type lstmFwd[T tensor.Float] struct {
	rnnDriver
	s                   *rnnSchedule
	h                   int
	a                   LSTMAttrs
	d                   lstmSlices[T]
	xw                  []T
	u                   *gemm.PackedB[T]
	hs, cs, z, out, act []T
}

var lstmFwdPools, lstmBwdPools [2]sync.Pool

// run takes run r of the batch through every step.
func (f *lstmFwd[T]) run(r rnnRun) {
	s, h, g4 := f.s, f.h, 4*f.h
	for t := range s.active {
		n := r.active(s, t)
		if n == 0 {
			return
		}
		for j := r.lo; j < r.lo+n; j++ {
			row := s.row(j, t)
			vec.Sum(f.z[j*g4:(j+1)*g4], f.xw[row*g4:(row+1)*g4], f.d.b)
		}
		if t > 0 || f.d.h0 != nil { // a zero initial state adds nothing to x·W + b
			runGemm(r, n, f.hs, h, f.u, 1, f.z, g4)
		}
		r.each(0, t, n, gateWork*h)
	}
}

// rows runs the gates of sequences [lo, hi) at step t and writes their
// h' and c' to their output rows.
func (f *lstmFwd[T]) rows(_, t, lo, hi int) {
	s, h, g4 := f.s, f.h, 4*f.h
	for j := lo; j < hi; j++ {
		row := s.row(j, t)
		lstmGates(h, f.a, f.z[j*g4:(j+1)*g4], f.d.p, f.hs[j*h:(j+1)*h], f.cs[j*h:(j+1)*h], f.act[row*g4:(row+1)*g4])
		copy(f.out[row*2*h:(row*2+1)*h], f.hs[j*h:(j+1)*h])
		copy(f.out[(row*2+1)*h:(row+1)*2*h], f.cs[j*h:(j+1)*h])
	}
}

// lstmGates is the fused gate kernel of one row: from the pre-activations
// z (blocks i, f, g, o) and the state c it writes the activations into act
// and the new state into h and c. Without peepholes and with the default
// tanh activations the nonlinearities run over whole gate blocks
// (vec.Sigmoid, vec.Tanh: the vector float32 kernels), and z is left
// holding tanh(c') in its first block.
func lstmGates[T tensor.Float](h int, a LSTMAttrs, z, p, hs, cs, act []T) {
	if p == nil && a.Candidate == ActTanh && a.Cell == ActTanh {
		vec.Sigmoid(act[:2*h], z[:2*h])
		vec.Tanh(act[2*h:3*h], z[2*h:3*h])
		vec.Sigmoid(act[3*h:4*h], z[3*h:4*h])
		i, f, g, o := act[:h], act[h:2*h], act[2*h:3*h], act[3*h:4*h]
		for k := range h {
			cs[k] = T(float64(f[k])*float64(cs[k]) + float64(i[k])*float64(g[k]))
		}
		vec.Tanh(z[:h], cs[:h])
		for k := range h {
			hs[k] = o[k] * z[k]
		}
		return
	}
	for k := 0; k < h; k++ {
		c := float64(cs[k])
		zi, zf, zg, zo := float64(z[k]), float64(z[h+k]), float64(z[2*h+k]), float64(z[3*h+k])
		if p != nil {
			zi += float64(p[k]) * c
			zf += float64(p[h+k]) * c
		}
		i, f, g := sigmoid(zi), sigmoid(zf), a.Candidate.apply(zg)
		cn := f*c + i*g
		if p != nil {
			zo += float64(p[2*h+k]) * cn
		}
		o := sigmoid(zo)
		act[k], act[h+k], act[2*h+k], act[3*h+k] = T(i), T(f), T(g), T(o)
		cs[k], hs[k] = T(cn), T(o*a.Cell.apply(cn))
	}
}

func (o *lstmOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	if o.act == nil {
		return nil, Errorf(o.name, in, "backward without the activations of a forward (never run, or freed)")
	}
	grads := wantedGrads(in, need)
	r, g := o.roles(in), o.roles(grads)
	h := r.u.Dim(0)
	switch out.DType() {
	case tensor.Float32:
		lstmBackward(o.s, r.x.Dim(1), h, o.attrs, lstmData[float32](r), out.Float32s(), gout.Float32s(), *o.act.(*[]float32), lstmData[float32](g))
	case tensor.Float64:
		lstmBackward(o.s, r.x.Dim(1), h, o.attrs, lstmData[float64](r), out.Float64s(), gout.Float64s(), *o.act.(*[]float64), lstmData[float64](g))
	}
	return grads, nil
}

// lstmBackward back-propagates through time. Per step (rows of the active
// sequences), with δh, δc the gradients reaching h', c' from the output and
// from the next step:
//
//	δc' = δc + δh∘o∘(1-tanh²c') + δo·po      δo = δh∘tanh(c')∘o(1-o)
//	δi = δc'∘g∘i(1-i)    δf = δc'∘c∘f(1-f)   δg = δc'∘i∘(1-g²)
//	δc (to the previous step) = δc'∘f + δi∘pi + δf∘pf
//	δh (to the previous step) = [δi δf δg δo]·Uᵀ
//
// then dx = δZ·Wᵀ, dW = xᵀ·δZ, dU = Hprevᵀ·δZ and db = Σ δZ over every row.
// With other activations (attrs.Candidate, attrs.Cell) their derivatives
// replace 1-g² and 1-tanh²c'. Gradients in gr may be nil (not wanted).
func lstmBackward[T tensor.Float](s *rnnSchedule, nIn, h int, a LSTMAttrs, d lstmSlices[T], out, gout, act []T, gr lstmSlices[T]) {
	total, g4, bs := s.off[len(s.off)-1], 4*h, s.batch()
	var dz []T // the gates' pre-activation gradients, every row written
	if gr.x != nil && d.w == nil {
		dz = gr.x // lstm_projected: x's gradient is the gates'
	} else {
		buf := getScratch[T](total * g4)
		defer putScratch(buf)
		dz = *buf
	}
	dhp, dcp, dzsp := getScratch[T](bs*h), getScratch[T](bs*h), getScratch[T](bs*g4)
	defer putScratch(dhp)
	defer putScratch(dcp)
	defer putScratch(dzsp)
	dh, dc, dzs := *dhp, *dcp, *dzsp
	clear(dh) // δh and δc start at zero beyond each sequence's last step
	clear(dc)
	ut := gemm.PackB(true, g4, h, d.u, g4) // Uᵀ, once for all steps
	i := floatIndex[T]()
	b := getPass[lstmBwd[T]](&lstmBwdPools, i)
	defer putPass(&lstmBwdPools, i, b)
	*b = lstmBwd[T]{s: s, h: h, a: a, d: d, out: out, gout: gout, act: act, ut: ut, dz: dz, dh: dh, dc: dc, dzs: dzs, gp: gr.p, needH0: gr.h0 != nil}
	// The peepholes' gradient sums every row of a step in order: no split.
	eachRun(&b.rnnDriver, b, s, total*g4*h, gr.p == nil)
	unsortRows(s, h, gr.h0, dh)
	unsortRows(s, h, gr.c0, dc)
	if gr.x != nil && d.w != nil {
		gemm.Gemm(false, true, total, nIn, g4, 1, dz, g4, d.w, g4, 0, gr.x, nIn)
	}
	if gr.w != nil {
		gemm.Gemm(true, false, nIn, g4, total, 1, d.x, nIn, dz, g4, 0, gr.w, g4)
	}
	if gr.u != nil {
		hp := getScratch[T](total * h) // the states entering each step, every row written
		defer putScratch(hp)
		prevStates(s, h, out, 2*h, d.h0, *hp)
		gemm.Gemm(true, false, h, g4, total, 1, *hp, h, dz, g4, 0, gr.u, g4)
	}
	if gr.b != nil {
		sumRows(gr.b, dz, total, g4)
	}
}

// lstmBwd is lstmBackward's pass (rnnPass): its operands, δh and δc of
// the active sequences (dh, dc, in the schedule's order), their gates'
// pre-activation gradients at the step (dzs) and at every row (dz), and
// the peepholes' gradient gp (nil when not wanted).
type lstmBwd[T tensor.Float] struct {
	rnnDriver
	s                                   *rnnSchedule
	h                                   int
	a                                   LSTMAttrs
	d                                   lstmSlices[T]
	out, gout, act, dz, dh, dc, dzs, gp []T
	ut                                  *gemm.PackedB[T]
	needH0                              bool // h0's gradient is wanted
}

// run takes run r of the batch back through every step and adds the
// peepholes' gradient into gp when it is not nil.
func (b *lstmBwd[T]) run(r rnnRun) {
	s, h, g4 := b.s, b.h, 4*b.h
	for t := len(s.active) - 1; t >= 0; t-- {
		n := r.active(s, t)
		if n == 0 {
			continue
		}
		r.each(0, t, n, gateWork*h)
		if gp := b.gp; gp != nil { // summed over rows in order, after the rows' parallel pass
			for j := r.lo; j < r.lo+n; j++ {
				row, zj := s.row(j, t), b.dzs[j*g4:(j+1)*g4]
				cp := prevCell(s, h, j, t, b.d.c0, b.out)
				for k := 0; k < h; k++ {
					if cp != nil {
						gp[k] += zj[k] * cp[k]
						gp[h+k] += zj[h+k] * cp[k]
					}
					gp[2*h+k] += zj[3*h+k] * b.out[(row*2+1)*h+k]
				}
			}
		}
		if t > 0 || b.needH0 { // δh of the first step reaches only h0's gradient
			runGemm(r, n, b.dzs, g4, b.ut, 0, b.dh, h)
		}
	}
}

// rows is the gate step of sequences [lo, hi) at step t: their δZ, into
// dzs and their rows of dz, and the δc that reaches the previous step.
func (b *lstmBwd[T]) rows(_, t, lo, hi int) {
	s, h, g4 := b.s, b.h, 4*b.h
	for j := lo; j < hi; j++ {
		lstmGateGrads(s, h, j, t, b.a, b.d, b.out, b.gout, b.act, b.dh, b.dc, b.dzs[j*g4:(j+1)*g4])
		copy(b.dz[s.row(j, t)*g4:], b.dzs[j*g4:(j+1)*g4])
	}
}

// prevCell returns the cell state that row j of step t started from: the
// previous step's c', its c0, or nil (zeros) when there is neither.
func prevCell[T tensor.Float](s *rnnSchedule, h, j, t int, c0, out []T) []T {
	switch pr := s.prev(j, t); {
	case pr >= 0:
		return out[(pr*2+1)*h : (pr*2+2)*h]
	case c0 != nil:
		return c0[s.order[j]*h : (s.order[j]+1)*h]
	}
	return nil
}

// lstmGateGrads is the gate step of lstmBackward for row j of step t: from
// δh and δc of the row (dh, dc, plus the output's gradient) it writes δZ
// into zj and the δc that reaches the previous step into dc.
func lstmGateGrads[T tensor.Float](s *rnnSchedule, h, j, t int, a LSTMAttrs, d lstmSlices[T], out, gout, act, dh, dc, zj []T) {
	g4, r := 4*h, s.row(j, t)
	cp := prevCell(s, h, j, t, d.c0, out)
	tanhCell := a.Cell == ActTanh
	if tanhCell {
		vec.Tanh(zj[:h], out[(r*2+1)*h:(r*2+2)*h]) // tanh(c'), read at k before zj[k] is written
		if a.Candidate == ActTanh && d.p == nil {
			lstmTanhGateGrads(act[r*g4:(r+1)*g4], cp, gout[r*2*h:(r+1)*2*h], dh[j*h:(j+1)*h], dc[j*h:(j+1)*h], zj)
			return
		}
	}
	for k := 0; k < h; k++ {
		i, f, g, o := float64(act[r*g4+k]), float64(act[r*g4+h+k]), float64(act[r*g4+2*h+k]), float64(act[r*g4+3*h+k])
		cpk := 0.0
		if cp != nil {
			cpk = float64(cp[k])
		}
		tc := float64(zj[k])
		if !tanhCell {
			tc = a.Cell.apply(float64(out[(r*2+1)*h+k]))
		}
		dhk := float64(dh[j*h+k]) + float64(gout[r*2*h+k])
		dck := float64(dc[j*h+k]) + float64(gout[(r*2+1)*h+k])
		do := dhk * tc * o * (1 - o)
		dck += dhk * o * a.Cell.grad(tc)
		if d.p != nil {
			dck += do * float64(d.p[2*h+k])
		}
		di, df, dg := dck*g*i*(1-i), dck*cpk*f*(1-f), dck*i*a.Candidate.grad(g)
		dcp := dck * f
		if d.p != nil {
			dcp += di*float64(d.p[k]) + df*float64(d.p[h+k])
		}
		dc[j*h+k] = T(dcp)
		zj[k], zj[h+k], zj[2*h+k], zj[3*h+k] = T(di), T(df), T(dg), T(do)
	}
}

// lstmTanhGateGrads is lstmGateGrads' loop for the default LSTM (tanh
// candidate and cell, no peepholes) in the element type, without the
// activation switches: act holds the row's gates i, f, g, o, cp its
// previous cell (nil for a zero state), gout the gradient of its h and c
// outputs, and zj tanh(c') on entry.
func lstmTanhGateGrads[T tensor.Float](act, cp, gout, dh, dc, zj []T) {
	h := len(dh)
	i, f, g, o := act[:h:h], act[h:2*h:2*h], act[2*h:3*h:3*h], act[3*h:4*h:4*h]
	gh, gc, dc := gout[:h:h], gout[h:2*h:2*h], dc[:h:h]
	dzi, dzf, dzg, dzo := zj[:h:h], zj[h:2*h:2*h], zj[2*h:3*h:3*h], zj[3*h:4*h:4*h]
	if cp == nil { // a zero previous cell: δf is δc'·0·f(1-f), kept as a product for NaN and signed zeros
		var zero T
		for k := range dh {
			tc, ik, fk, gk, ok := dzi[k], i[k], f[k], g[k], o[k]
			dhk := dh[k] + gh[k]
			dck := dc[k] + gc[k] + dhk*ok*(1-tc*tc)
			dzo[k] = dhk * tc * ok * (1 - ok)
			dzi[k] = dck * gk * ik * (1 - ik)
			dzf[k] = dck * zero * fk * (1 - fk)
			dzg[k] = dck * ik * (1 - gk*gk)
			dc[k] = dck * fk
		}
		return
	}
	cp = cp[:h:h]
	for k := range dh {
		tc, ik, fk, gk, ok, cpk := dzi[k], i[k], f[k], g[k], o[k], cp[k]
		dhk := dh[k] + gh[k]
		dck := dc[k] + gc[k] + dhk*ok*(1-tc*tc)
		dzo[k] = dhk * tc * ok * (1 - ok)
		dzi[k] = dck * gk * ik * (1 - ik)
		dzf[k] = dck * cpk * fk * (1 - fk)
		dzg[k] = dck * ik * (1 - gk*gk)
		dc[k] = dck * fk
	}
}
