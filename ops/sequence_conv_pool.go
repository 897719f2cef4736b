package ops

import (
	"slices"

	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "sequence_conv_pool_max", Inputs: []string{"x", "filter", "padding"}, Grads: []int{0, 1, 2},
		Make: MakeOp(func(a SequenceConvAttrs) Op { return SequenceConvPoolMaxOp(a.Offsets, a.ContextStart, a.ContextLength) }), CUDA: DeviceFallback})
}

// sequenceConvPoolMaxOp is sequence_conv followed by max pooling over each
// sequence (Paddle's sequence_conv_pool with pool_type max, without the
// bias and activation, which commute with the maximum): y [B, out] holds
// each sequence's column maxima of SequenceConv(x, filter, padding), 0 for
// an empty sequence.
//
// One op rather than two because of the backward pass: the pooling sends
// each column's gradient to a single step (its first maximum), so the
// convolution's upstream gradient has at most B·out nonzeros in
// [total, out]. Here each of them adds its slot rows into dfilter and its
// filter column into dx (and dpadding) directly, B·out·contextLength·D
// multiply-adds each, where the two ops run two GEMMs of
// total·out·contextLength·D over a gradient that is almost all zeros.
type sequenceConvPoolMaxOp struct {
	conv sequenceConvOp
	arg  []int // per output element: the step of its maximum (Forward's)
}

// SequenceConvPoolMaxOp returns max-pooled sequence_conv over a ragged
// batch x [total, D] with the given offsets; see SequenceConvOp for the
// window and padding.
func SequenceConvPoolMaxOp(offsets []int, contextStart, contextLength int) Op {
	return &sequenceConvPoolMaxOp{conv: sequenceConvOp{offsets: slices.Clone(offsets), start: contextStart, length: contextLength}}
}

// SequenceConvPoolMax applies sequence_conv_pool_max to x; padding may be
// nil for zero padding.
func SequenceConvPoolMax(x, filter, padding *tensor.Tensor, offsets []int, contextStart, contextLength int) (*tensor.Tensor, error) {
	op := SequenceConvPoolMaxOp(offsets, contextStart, contextLength)
	if padding == nil {
		return run(op, x, filter)
	}
	return run(op, x, filter, padding)
}

func (o *sequenceConvPoolMaxOp) Name() string { return "sequence_conv_pool_max" }

func (o *sequenceConvPoolMaxOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	dt, err := o.conv.check("sequence_conv_pool_max", in)
	if err != nil {
		return nil, err
	}
	out := tensor.Empty(dt, len(o.conv.offsets)-1, in[1].Dim(1))
	o.arg = make([]int, out.Size())
	o.into(out, in, o.arg)
	return out, nil
}

// ForwardInto is sequence_conv_pool_max's Into; the maxima's steps, which
// only Backward reads, go to scratch.
func (o *sequenceConvPoolMaxOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	dt, err := o.conv.check("sequence_conv_pool_max", in)
	if err != nil {
		return err
	}
	if err := checkOut("sequence_conv_pool_max", in, out, dt, len(o.conv.offsets)-1, in[1].Dim(1)); err != nil {
		return err
	}
	arg := getScratch[int](out.Size())
	defer putScratch(arg)
	o.into(out, in, *arg)
	return nil
}

// into runs the kernel in the inputs' dtype, writing every element of out
// and each one's maximum step into arg.
func (o *sequenceConvPoolMaxOp) into(out *tensor.Tensor, in []*tensor.Tensor, arg []int) {
	x, f := in[0], in[1]
	switch out.DType() {
	case tensor.Float32:
		seqConvPoolMaxKernel(&o.conv, x.Dim(1), f.Dim(1), x.Float32s(), f.Float32s(), padData[float32](in), out.Float32s(), arg)
	case tensor.Float64:
		seqConvPoolMaxKernel(&o.conv, x.Dim(1), f.Dim(1), x.Float64s(), f.Float64s(), padData[float64](in), out.Float64s(), arg)
	}
}

// seqConvPoolMaxKernel convolves into a scratch buffer and pools it into y
// (zeros for an empty sequence), writing each output element's maximum
// step into arg.
func seqConvPoolMaxKernel[T tensor.Float](o *sequenceConvOp, d, n int, x, f, pad, y []T, arg []int) {
	total := len(x) / max(d, 1)
	if d == 0 {
		total = o.offsets[len(o.offsets)-1]
	}
	conv := getScratch[T](total * n)
	defer putScratch(conv)
	seqConvKernel(o, d, n, x, f, pad, *conv)
	for b := 0; b+1 < len(o.offsets); b++ {
		if s, e := o.offsets[b], o.offsets[b+1]; s < e {
			seqMaxRows((*conv)[s*n:e*n], n, s, y[b*n:(b+1)*n], arg[b*n:(b+1)*n])
		} else {
			clear(y[b*n : (b+1)*n])
		}
	}
}

func (o *sequenceConvPoolMaxOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	if len(o.arg) != out.Size() {
		return nil, Errorf("sequence_conv_pool_max", in, "backward before forward")
	}
	grads := wantedGrads(in, need)
	var gp *tensor.Tensor
	if len(in) == 3 {
		gp = grads[2]
	}
	d, n := in[0].Dim(1), in[1].Dim(1)
	switch out.DType() {
	case tensor.Float32:
		seqConvPoolMaxGrad(&o.conv, o.arg, d, n, in[0].Float32s(), in[1].Float32s(), padData[float32](in), gout.Float32s(),
			floats[float32](grads[0]), floats[float32](grads[1]), floats[float32](gp))
	case tensor.Float64:
		seqConvPoolMaxGrad(&o.conv, o.arg, d, n, in[0].Float64s(), in[1].Float64s(), padData[float64](in), gout.Float64s(),
			floats[float64](grads[0]), floats[float64](grads[1]), floats[float64](gp))
	}
	return grads, nil
}

// seqConvPoolMaxGrad adds, for each output element (b, c) with gradient g
// and maximum at step r, g times step r's context rows into column c of
// dfilter and g times filter column c into the rows those slots read (dx,
// or dpadding outside the sequence). Column c of the filter and of its
// gradient are rows of transposed copies, so every update is an axpy over
// contiguous memory; a window inside its sequence is also contiguous in x
// and dx, one axpy of contextLength·D.
func seqConvPoolMaxGrad[T tensor.Float](o *sequenceConvOp, arg []int, d, n int, x, f, pad, g, dx, df, dpad []T) {
	w := o.length * d
	if w == 0 || n == 0 {
		return
	}
	ft := getScratch[T](n * w) // ft[c·w+k] = f[k·n+c]
	defer putScratch(ft)
	im2col.Transpose(*ft, w, f, n, w, n, false)
	dft := getScratch[T](n * w)
	defer putScratch(dft)
	clear(*dft)
	for b := 0; b+1 < len(o.offsets); b++ {
		s, e := o.offsets[b], o.offsets[b+1]
		if s == e {
			continue
		}
		for c := range n {
			gv := g[b*n+c]
			if gv == 0 {
				continue
			}
			r := arg[b*n+c]
			fc, dfc := (*ft)[c*w:(c+1)*w], (*dft)[c*w:(c+1)*w]
			if lo := r + o.start; lo >= s && lo+o.length <= e {
				vec.Axpy(dfc, x[lo*d:lo*d+w], gv)
				if dx != nil {
					vec.Axpy(dx[lo*d:lo*d+w], fc, gv)
				}
				continue
			}
			o.contextOf(seqStep{r, s, e}, func(j, src, p int) {
				slot := j * d
				switch {
				case src >= 0:
					vec.Axpy(dfc[slot:slot+d], x[src*d:(src+1)*d], gv)
					if dx != nil {
						vec.Axpy(dx[src*d:(src+1)*d], fc[slot:slot+d], gv)
					}
				case pad != nil:
					vec.Axpy(dfc[slot:slot+d], pad[p*d:(p+1)*d], gv)
					if dpad != nil {
						vec.Axpy(dpad[p*d:(p+1)*d], fc[slot:slot+d], gv)
					}
				}
			})
		}
	}
	if df != nil {
		im2col.Transpose(df, n, *dft, w, n, w, false)
	}
}
