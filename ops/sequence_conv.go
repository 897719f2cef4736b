package ops

import (
	"slices"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "sequence_conv", Inputs: []string{"x", "filter", "padding"}, Grads: []int{0, 1, 2}})
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
	if len(in) != 2 && len(in) != 3 {
		return nil, Errorf("sequence_conv", in, "want inputs x, filter and optional padding")
	}
	dt, err := checkFloat("sequence_conv", in, len(in))
	if err != nil {
		return nil, err
	}
	x, f := in[0], in[1]
	if o.length < 1 {
		return nil, Errorf("sequence_conv", in, "context length %d must be positive", o.length)
	}
	if x.Rank() != 2 || f.Rank() != 2 || f.Dim(0) != o.length*x.Dim(1) {
		return nil, Errorf("sequence_conv", in, "want x [total, D] and filter [contextLength·D, out] with contextLength %d", o.length)
	}
	if len(in) == 3 {
		if p := in[2]; p.Rank() != 2 || p.Dim(0) != SequenceConvPadRows(o.start, o.length) || p.Dim(1) != x.Dim(1) {
			return nil, Errorf("sequence_conv", in, "want padding [%d, %d] for context start %d and length %d",
				SequenceConvPadRows(o.start, o.length), x.Dim(1), o.start, o.length)
		}
	}
	if err := checkOffsets("sequence_conv", in, o.offsets, x.Dim(0)); err != nil {
		return nil, err
	}
	out := tensor.Zeros(dt, x.Dim(0), f.Dim(1))
	switch dt {
	case tensor.Float32:
		seqConvKernel(o, x.Dim(1), f.Dim(1), x.Float32s(), f.Float32s(), padData[float32](in), out.Float32s())
	case tensor.Float64:
		seqConvKernel(o, x.Dim(1), f.Dim(1), x.Float64s(), f.Float64s(), padData[float64](in), out.Float64s())
	}
	return out, nil
}

// padData returns the padding input's data, or nil without one.
func padData[T tensor.Float](in []*tensor.Tensor) []T {
	if len(in) < 3 {
		return nil
	}
	return tensor.Data[T](in[2])
}

// eachContext calls f(r, j, src, pad) for window slot j of every step r:
// src is the x row the slot reads, or -1 outside the sequence, where pad
// is the padding row it reads.
func (o *sequenceConvOp) eachContext(f func(r, j, src, pad int)) {
	up := max(0, -o.start)
	for b := 0; b+1 < len(o.offsets); b++ {
		s, e := o.offsets[b], o.offsets[b+1]
		for r := s; r < e; r++ {
			for j := 0; j < o.length; j++ {
				switch c := r + o.start + j; {
				case c < s:
					f(r, j, -1, up-(s-c))
				case c >= e:
					f(r, j, -1, up+(c-e))
				default:
					f(r, j, c, 0)
				}
			}
		}
	}
}

// seqConvCols lays out the context rows of x [total, d] (with padding
// rows from pad, or zeros if pad is nil) as col [total, length·d], a
// pooled scratch buffer the caller gives back with putScratch: at a text
// CNN's batch it is tens of megabytes, made again by every call otherwise.
func seqConvCols[T tensor.Float](o *sequenceConvOp, d int, x, pad []T) *[]T {
	w := o.length * d
	buf := getScratch[T](len(x) / max(d, 1) * w)
	col := *buf
	if d == 0 {
		return buf
	}
	o.eachContext(func(r, j, src, p int) {
		dst := col[r*w+j*d : r*w+(j+1)*d]
		switch {
		case src >= 0:
			copy(dst, x[src*d:(src+1)*d])
		case pad != nil:
			copy(dst, pad[p*d:(p+1)*d])
		default:
			clear(dst)
		}
	})
	return buf
}

func seqConvKernel[T tensor.Float](o *sequenceConvOp, d, n int, x, f, pad, y []T) {
	col := seqConvCols(o, d, x, pad)
	defer putScratch(col)
	m := len(y) / max(n, 1)
	gemm.Gemm(false, false, m, n, o.length*d, 1, *col, o.length*d, f, n, 0, y, n)
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

// seqConvGrad: dfilter = colᵀ·dy, dcol = dy·filterᵀ, and dcol's slots
// scatter-add back into the x rows and padding rows they were read from.
func seqConvGrad[T tensor.Float](o *sequenceConvOp, d, n int, x, f, pad, dy, dx, df, dpad []T) {
	w := o.length * d
	m := len(dy) / max(n, 1)
	if n == 0 {
		m = len(x) / max(d, 1)
	}
	if df != nil {
		col := seqConvCols(o, d, x, pad)
		gemm.Gemm(true, false, w, n, m, 1, *col, w, dy, n, 0, df, n)
		putScratch(col)
	}
	if (dx == nil && dpad == nil) || d == 0 {
		return
	}
	buf := getScratch[T](m * w) // every element written by the GEMM (beta 0)
	defer putScratch(buf)
	dcol := *buf
	gemm.Gemm(false, true, m, w, n, 1, dy, n, f, n, 0, dcol, w)
	o.eachContext(func(r, j, src, p int) {
		var dst []T
		switch {
		case src >= 0 && dx != nil:
			dst = dx[src*d : (src+1)*d]
		case src < 0 && dpad != nil:
			dst = dpad[p*d : (p+1)*d]
		default:
			return
		}
		for k, v := range dcol[r*w+j*d : r*w+(j+1)*d] {
			dst[k] += v
		}
	})
}
