package ops

import (
	"slices"
	"sync"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "sequence_conv", Inputs: []string{"x", "filter", "padding"}, Grads: []int{0, 1, 2},
		Make: MakeOp(func(a SequenceConvAttrs) Op { return SequenceConvOp(a.Offsets, a.ContextStart, a.ContextLength) }), CUDA: DeviceFallback})
}

// SequenceConvAttrs are sequence_conv's (and sequence_conv_pool_max's)
// attributes: the offsets and the context window.
type SequenceConvAttrs struct {
	Offsets       []int `json:"offsets"`
	ContextStart  int   `json:"context_start"`
	ContextLength int   `json:"context_length"`
}

type sequenceConvOp struct {
	offsets       []int
	start, length int
}

// SequenceConvOp returns Paddle's sequence_conv (context projection then a
// GEMM, contextStride 1) over a ragged batch x [total, D] with the given
// offsets. Step t of a sequence sees the contextLength steps t+contextStart,
// ..., t+contextStart+contextLength-1 of its own sequence (contextStart may
// be negative; the window never crosses into another sequence), laid side
// by side into a row [contextLength·D], and the output row is that row
// times filter [contextLength·D, out], giving [total, out].
//
// A window step outside its sequence is zero, or, with the optional third
// input padding [upPad+downPad, D] (Paddle's paddingTrainable), a padding
// row: the k-th step before the start (k = 1, 2, ...) reads row upPad-k and
// the k-th step past the end (k = 0, 1, ...) reads row upPad+k, where
// upPad = max(0, -contextStart) and downPad =
// max(0, contextStart+contextLength-1). Gradients flow to x, filter and
// padding.
func SequenceConvOp(offsets []int, contextStart, contextLength int) Op {
	return &sequenceConvOp{offsets: slices.Clone(offsets), start: contextStart, length: contextLength}
}

// SequenceConv applies sequence_conv to x; padding may be nil for zero
// padding. See SequenceConvOp.
func SequenceConv(x, filter, padding *tensor.Tensor, offsets []int, contextStart, contextLength int) (*tensor.Tensor, error) {
	op := SequenceConvOp(offsets, contextStart, contextLength)
	if padding == nil {
		return run(op, x, filter)
	}
	return run(op, x, filter, padding)
}

// SequenceConvPadRows returns the number of rows, upPad+downPad, of the
// trainable padding of a sequence_conv window.
func SequenceConvPadRows(contextStart, contextLength int) int {
	return max(0, -contextStart) + max(0, contextStart+contextLength-1)
}

func (o *sequenceConvOp) Name() string { return "sequence_conv" }

func (o *sequenceConvOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := o.check("sequence_conv", in)
	if err != nil {
		return nil, err
	}
	x, f := in[0], in[1]
	out := tensor.Zeros(dt, x.Dim(0), f.Dim(1))
	switch dt {
	case tensor.Float32:
		seqConvKernel(o, x.Dim(1), f.Dim(1), x.Float32s(), f.Float32s(), padData[float32](in), out.Float32s())
	case tensor.Float64:
		seqConvKernel(o, x.Dim(1), f.Dim(1), x.Float64s(), f.Float64s(), padData[float64](in), out.Float64s())
	}
	return out, nil
}

// check validates the inputs x, filter and optional padding of the op
// called name and returns their dtype.
func (o *sequenceConvOp) check(name string, in []*tensor.Tensor) (tensor.DType, error) {
	if len(in) != 2 && len(in) != 3 {
		return 0, Errorf(name, in, "want inputs x, filter and optional padding")
	}
	dt, err := checkFloat(name, in, len(in))
	if err != nil {
		return 0, err
	}
	x, f := in[0], in[1]
	if o.length < 1 {
		return 0, Errorf(name, in, "context length %d must be positive", o.length)
	}
	if x.Rank() != 2 || f.Rank() != 2 || f.Dim(0) != o.length*x.Dim(1) {
		return 0, Errorf(name, in, "want x [total, D] and filter [contextLength·D, out] with contextLength %d", o.length)
	}
	if len(in) == 3 {
		if p := in[2]; p.Rank() != 2 || p.Dim(0) != SequenceConvPadRows(o.start, o.length) || p.Dim(1) != x.Dim(1) {
			return 0, Errorf(name, in, "want padding [%d, %d] for context start %d and length %d",
				SequenceConvPadRows(o.start, o.length), x.Dim(1), o.start, o.length)
		}
	}
	return dt, checkOffsets(name, in, o.offsets, x.Dim(0))
}

// padData returns the padding input's data, or nil without one.
func padData[T tensor.Float](in []*tensor.Tensor) []T {
	if len(in) < 3 {
		return nil
	}
	return tensor.Data[T](in[2])
}

// seqStep is step r of the sequence of rows s..e-1.
type seqStep struct{ r, s, e int }

// seqSteps pools the edge-step lists (edgeSteps) of the sequence
// convolutions, so that a call allocates none once one list has grown to
// its size.
var seqSteps = sync.Pool{New: func() any { return new([]seqStep) }}

// contextOf calls f(j, src, pad) for each window slot j of step st: src
// is the x row the slot reads, or -1 outside the sequence, where pad is
// the padding row it reads.
func (o *sequenceConvOp) contextOf(st seqStep, f func(j, src, pad int)) {
	up := max(0, -o.start)
	for j := 0; j < o.length; j++ {
		switch c := st.r + o.start + j; {
		case c < st.s:
			f(j, -1, up-(st.s-c))
		case c >= st.e:
			f(j, -1, up+(c-st.e))
		default:
			f(j, c, 0)
		}
	}
}

// fillSlot writes into dst (d values) the x row src, or padding row p
// when src < 0 (zeros without padding).
func fillSlot[T tensor.Float](dst []T, src, p, d int, x, pad []T) {
	switch {
	case src >= 0:
		copy(dst, x[src*d:(src+1)*d])
	case pad != nil:
		copy(dst, pad[p*d:(p+1)*d])
	default:
		clear(dst)
	}
}

// viewRows returns the rows lo..hi-1 whose windows, read as length
// consecutive rows of x, lie inside x's total rows.
func (o *sequenceConvOp) viewRows(total int) (lo, hi int) {
	lo = max(0, -o.start)
	return lo, max(lo, min(total, total-o.start-o.length+1))
}

// edgeSteps returns, in row order, the steps whose window leaves their
// own sequence or lies outside lo..hi (viewRows): the steps the view of x
// gets wrong. It appends them to edges[:0] (a pooled buffer, seqSteps).
func (o *sequenceConvOp) edgeSteps(lo, hi int, edges []seqStep) []seqStep {
	edges = edges[:0]
	for b := 0; b+1 < len(o.offsets); b++ {
		s, e := o.offsets[b], o.offsets[b+1]
		for r := s; r < e; r++ {
			if r+o.start < s || r+o.start+o.length > e || r < lo || r >= hi {
				edges = append(edges, seqStep{r, s, e})
			}
		}
	}
	return edges
}

// seqConvEdgeCols lays out the context rows of the steps edges side by
// side, [len(edges), length·d], in a pooled buffer the caller gives back
// with putScratch.
func seqConvEdgeCols[T tensor.Float](o *sequenceConvOp, edges []seqStep, d int, x, pad []T) *[]T {
	w := o.length * d
	buf := getScratch[T](len(edges) * w)
	col := *buf
	for i, st := range edges {
		o.contextOf(st, func(j, src, p int) { fillSlot(col[i*w+j*d:i*w+(j+1)*d], src, p, d, x, pad) })
	}
	return buf
}

// seqConvKernel computes y = col·filter, col being the context rows of
// every step side by side, without laying col out for most steps: a
// window inside its sequence is length consecutive rows of x, which lie
// side by side in memory, so those rows of col are a view of x with row
// stride d (Gemm's lda), each overlapping the next. One GEMM runs over the
// view for the rows whose windows lie inside x, and the edge steps
// (edgeSteps) are computed again from their own context rows.
func seqConvKernel[T tensor.Float](o *sequenceConvOp, d, n int, x, f, pad, y []T) {
	m, w := len(y)/max(n, 1), o.length*d
	if d == 0 || n == 0 {
		clear(y)
		return
	}
	lo, hi := o.viewRows(m)
	if hi > lo {
		gemm.Gemm(false, false, hi-lo, n, w, 1, x[(lo+o.start)*d:], d, f, n, 0, y[lo*n:], n)
	}
	eb := seqSteps.Get().(*[]seqStep)
	defer seqSteps.Put(eb)
	*eb = o.edgeSteps(lo, hi, *eb)
	edges := *eb
	if len(edges) == 0 {
		return
	}
	col := seqConvEdgeCols(o, edges, d, x, pad)
	defer putScratch(col)
	out := getScratch[T](len(edges) * n)
	defer putScratch(out)
	gemm.Gemm(false, false, len(edges), n, w, 1, *col, w, f, n, 0, *out, n)
	for i, st := range edges {
		copy(y[st.r*n:(st.r+1)*n], (*out)[i*n:(i+1)*n])
	}
}

// seqConvFilterGrad writes dfilter = colᵀ·dy by the view of
// seqConvKernel: one GEMM over the view's rows, then one over the edge
// steps with rows col - view (col alone outside the view), which takes
// out what the view got wrong and puts in what col holds.
func seqConvFilterGrad[T tensor.Float](o *sequenceConvOp, d, n int, x, pad, dy, df []T) {
	m, w := len(dy)/n, o.length*d
	lo, hi := o.viewRows(m)
	beta := T(0)
	if hi > lo {
		gemm.Gemm(true, false, w, n, hi-lo, 1, x[(lo+o.start)*d:], d, dy[lo*n:], n, 0, df, n)
		beta = 1
	}
	eb := seqSteps.Get().(*[]seqStep)
	defer seqSteps.Put(eb)
	*eb = o.edgeSteps(lo, hi, *eb)
	edges := *eb
	if len(edges) == 0 {
		if beta == 0 {
			clear(df)
		}
		return
	}
	col := seqConvEdgeCols(o, edges, d, x, pad)
	defer putScratch(col)
	dyE := getScratch[T](len(edges) * n)
	defer putScratch(dyE)
	c := *col
	for i, st := range edges {
		if st.r >= lo && st.r < hi {
			v := x[(st.r+o.start)*d : (st.r+o.start)*d+w]
			for k := range v {
				c[i*w+k] -= v[k]
			}
		}
		copy((*dyE)[i*n:(i+1)*n], dy[st.r*n:(st.r+1)*n])
	}
	gemm.Gemm(true, false, w, n, len(edges), 1, c, w, *dyE, n, beta, df, n)
}

func (o *sequenceConvOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	grads := wantedGrads(in, need)
	var gp *tensor.Tensor
	if len(in) == 3 {
		gp = grads[2]
	}
	d, n := in[0].Dim(1), in[1].Dim(1)
	switch out.DType() {
	case tensor.Float32:
		seqConvGrad(o, d, n, in[0].Float32s(), in[1].Float32s(), padData[float32](in), gout.Float32s(),
			floats[float32](grads[0]), floats[float32](grads[1]), floats[float32](gp))
	case tensor.Float64:
		seqConvGrad(o, d, n, in[0].Float64s(), in[1].Float64s(), padData[float64](in), gout.Float64s(),
			floats[float64](grads[0]), floats[float64](grads[1]), floats[float64](gp))
	}
	return grads, nil
}

// seqConvGrad: dfilter = colᵀ·dy (seqConvFilterGrad), dx from a view of
// dy (seqConvInputGrad), and dpadding from the edge steps' padding slots.
func seqConvGrad[T tensor.Float](o *sequenceConvOp, d, n int, x, f, pad, dy, dx, df, dpad []T) {
	if n == 0 || d == 0 {
		clear(df)
		return
	}
	if df != nil {
		seqConvFilterGrad(o, d, n, x, pad, dy, df)
	}
	if dx != nil {
		seqConvInputGrad(o, d, n, f, dy, dx)
	}
	if dpad != nil {
		lo, hi := o.viewRows(len(dy) / n)
		for _, st := range o.edgeSteps(lo, hi, nil) {
			o.contextOf(st, func(j, src, p int) {
				if src >= 0 {
					return
				}
				g := dy[st.r*n : (st.r+1)*n]
				for k := range d {
					dpad[p*d+k] += vec.Dot(f[(j*d+k)*n:(j*d+k+1)*n], g)
				}
			})
		}
	}
}

// seqConvInputGrad writes dx. Row c of x is read by slot j of step
// c - start - j, so dx[c] = Σ_j dy[c-start-j]·filter_jᵀ (filter_j the
// slot's [d, out] block), over the steps of c's own sequence. Where all
// length of those steps are in c's sequence they are length consecutive
// rows of dy, a view with row stride out: one GEMM of the view by the
// slots' transposed blocks stacked in reverse, [length·out, d]. The other
// rows (near a sequence's ends) gather their steps' dy rows, zeros for
// steps outside the sequence, for one more GEMM.
func seqConvInputGrad[T tensor.Float](o *sequenceConvOp, d, n int, f, dy, dx []T) {
	m, l := len(dy)/n, o.length
	back := getScratch[T](l * n * d) // row block i: filter_{l-1-i}ᵀ
	defer putScratch(back)
	fb := *back
	for i := range l {
		im2col.Transpose(fb[i*n*d:], d, f[(l-1-i)*d*n:], n, d, n, false)
	}
	first := o.start + l - 1 // the view's rows: c - first >= 0 and c - start < m
	lo, hi := max(0, first), min(m, m+o.start)
	if hi > lo {
		gemm.Gemm(false, false, hi-lo, d, l*n, 1, dy[(lo-first)*n:], n, fb, d, 0, dx[lo*d:], d)
	}
	var edges []seqStep
	for b := 0; b+1 < len(o.offsets); b++ {
		s, e := o.offsets[b], o.offsets[b+1]
		for c := s; c < e; c++ {
			if c-first < s || c-o.start >= e || c < lo || c >= hi {
				edges = append(edges, seqStep{c, s, e})
			}
		}
	}
	if len(edges) == 0 {
		return
	}
	buf := getScratch[T](len(edges) * l * n)
	defer putScratch(buf)
	g := *buf
	for i, st := range edges {
		for k := range l {
			row := g[(i*l+k)*n : (i*l+k+1)*n]
			if r := st.r - first + k; r >= st.s && r < st.e {
				copy(row, dy[r*n:(r+1)*n])
			} else {
				clear(row)
			}
		}
	}
	out := getScratch[T](len(edges) * d)
	defer putScratch(out)
	gemm.Gemm(false, false, len(edges), d, l*n, 1, g, l*n, fb, d, 0, *out, d)
	for i, st := range edges {
		copy(dx[st.r*d:(st.r+1)*d], (*out)[i*d:(i+1)*d])
	}
}
