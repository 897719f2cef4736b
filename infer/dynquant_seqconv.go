package infer

import (
	"fmt"
	"slices"
	"sync"

	"github.com/plumbml/plumb/internal/qgemm"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// dynSeqConvPoolOp is sequence_conv_pool_max (ops.SequenceConvPoolMaxOp,
// Paddle's sequence_conv then a max over each sequence's steps) with zero
// padding, dynamically quantized: x [total, D] is quantized once per call
// per tensor (ONNX DynamicQuantizeLinear), each step's window of
// contextLength rows of its own sequence is laid side by side as uint8
// (a step outside the sequence is the zero point, which stands for 0.0,
// as the float op's zero padding), and the windows times the int8 filter
// (per output channel, quantized at compile) give the float32 convolution
// that is then max-pooled per sequence (zeros for an empty one). It is
// the text CNN's convolution as ONNX Runtime's dynamic quantization of
// its im2col MatMul would run it.
type dynSeqConvPoolOp struct {
	layer         string
	offsets       []int
	start, length int
	d, n          int
	pb            *qgemm.PackedB
	scale         []float32
	bufs          sync.Pool // *dynSeqScratch
}

// dynSeqScratch is one call's buffers: x quantized, the windows and the
// float convolution.
type dynSeqScratch struct {
	qx, win []uint8
	conv    []float32
	ep      qgemm.Epilogue
}

// newDynSeqConvPool quantizes the filter of a sequence_conv_pool_max node
// without padding.
func newDynSeqConvPool(layer string, g *Graph, nd node) (*dynSeqConvPoolOp, error) {
	at, ok := nd.op.(ops.Attributed)
	if !ok {
		return nil, fmt.Errorf("%s has no attributes", nd.op.Name())
	}
	a, ok := at.Attrs().(ops.SequenceConvAttrs)
	if !ok {
		return nil, fmt.Errorf("%s has attributes %T, want ops.SequenceConvAttrs", nd.op.Name(), at.Attrs())
	}
	ft := g.values[nd.in[1]].c
	k, n := ft.Dim(0), ft.Dim(1)
	w := make([]float32, k*n)
	for i := range w {
		w[i] = float32(ft.At(i))
	}
	q, scale, err := qgemm.QuantizeWeights(k, n, w, n)
	if err != nil {
		return nil, err
	}
	pb, err := qgemm.PackB(k, n, q, n)
	if err != nil {
		return nil, err
	}
	return &dynSeqConvPoolOp{layer: layer, offsets: slices.Clone(a.Offsets), start: a.ContextStart, length: a.ContextLength,
		d: g.values[nd.in[0]].shape[1], n: n, pb: pb, scale: scale}, nil
}

func (o *dynSeqConvPoolOp) Name() string { return "sequence_conv_pool_max_dynamic_int8" }

// flops counts two a multiply-add of the windows' product.
func (o *dynSeqConvPoolOp) flops() int64 {
	return 2 * int64(o.offsets[len(o.offsets)-1]) * int64(o.length*o.d) * int64(o.n)
}

func (o *dynSeqConvPoolOp) check(in []*tensor.Tensor) error {
	total := o.offsets[len(o.offsets)-1]
	if len(in) != 1 || in[0] == nil || in[0].DType() != tensor.Float32 || in[0].Storage() != nil ||
		in[0].Rank() != 2 || in[0].Dim(0) != total || in[0].Dim(1) != o.d {
		return ops.Errorf(o.Name(), in, "layer %s: want one host float32 x [%d, %d]", o.layer, total, o.d)
	}
	return nil
}

func (o *dynSeqConvPoolOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := o.check(in); err != nil {
		return nil, err
	}
	out := tensor.Empty(tensor.Float32, len(o.offsets)-1, o.n)
	return out, o.ForwardInto(out, in)
}

// ForwardInto is the op's Into.
func (o *dynSeqConvPoolOp) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	if err := o.check(in); err != nil {
		return err
	}
	nb := len(o.offsets) - 1
	if out == nil || out.DType() != tensor.Float32 || out.Storage() != nil || out.Rank() != 2 || out.Dim(0) != nb || out.Dim(1) != o.n {
		return ops.Errorf(o.Name(), in, "layer %s: want out float32 [%d, %d]", o.layer, nb, o.n)
	}
	total, d, k := o.offsets[nb], o.d, o.length*o.d
	s, _ := o.bufs.Get().(*dynSeqScratch)
	if s == nil {
		s = &dynSeqScratch{}
	}
	defer o.bufs.Put(s)
	s.qx, s.win, s.conv = grow(s.qx, total*d), grow(s.win, total*k), grow(s.conv, total*o.n)
	sx, zp, err := dynQuantizeRows(total, d, 0, in[0].Float32s(), nil, s.qx)
	if err != nil {
		return fmt.Errorf("infer: %s (layer %s): %w", o.Name(), o.layer, err)
	}
	for b := range nb {
		lo, hi := o.offsets[b], o.offsets[b+1]
		for t := lo; t < hi; t++ {
			row := s.win[t*k : (t+1)*k]
			for j := range o.length {
				dst := row[j*d : (j+1)*d]
				if src := t + o.start + j; src >= lo && src < hi {
					copy(dst, s.qx[src*d:(src+1)*d])
				} else {
					for i := range dst {
						dst[i] = zp
					}
				}
			}
		}
	}
	s.ep = qgemm.Epilogue{ScaleA: sx, ScaleB: o.scale}
	if err := qgemm.GemmFloat32(total, s.win, k, zp, o.pb, &s.ep, s.conv, o.n); err != nil {
		return fmt.Errorf("infer: %s (layer %s): %w", o.Name(), o.layer, err)
	}
	y := out.Float32s()
	for b := range nb {
		yb := y[b*o.n : (b+1)*o.n]
		lo, hi := o.offsets[b], o.offsets[b+1]
		if lo == hi {
			clear(yb)
			continue
		}
		copy(yb, s.conv[lo*o.n:(lo+1)*o.n])
		for t := lo + 1; t < hi; t++ {
			for c, v := range s.conv[t*o.n : (t+1)*o.n] {
				if v > yb[c] {
					yb[c] = v
				}
			}
		}
	}
	return nil
}

// grow returns s with length n, reusing its memory when it is large
// enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

func (o *dynSeqConvPoolOp) Backward([]*tensor.Tensor, *tensor.Tensor, *tensor.Tensor, []bool) ([]*tensor.Tensor, error) {
	return nil, fmt.Errorf("infer: %s (layer %s) is inference-only", o.Name(), o.layer)
}
