package ops

import (
	"fmt"

	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/tensor"
)

// This file is the general windowed pool behind the 3-D pools and the 2-D
// pools' dilated, ceil-mode and count-include-pad forms: ONNX MaxPool and
// AveragePool (opset 19; dilations, ceil_mode, count_include_pad and
// asymmetric pads) over up to three spatial axes. A 2-D pool runs as a 3-D
// one of depth 1. Along each axis, output o's window has taps
// start + t·dilation for t < kernel, start = o·stride − pad_begin; only the
// taps inside the input are read.
//
// Output size along an axis, with eff = (kernel−1)·dilation + 1 and
// span = in + pad_begin + pad_end − eff: floor(span / stride) + 1, or in
// ceil mode ceil(span / stride) + 1, less one when the last window would
// start past the input and its leading padding, (out−1)·stride >=
// in + pad_begin (PyTorch's pooling_output_shape; ONNX Runtime's
// ComputeOutputSize in ceil mode). A window in ceil mode may thus run past
// the trailing padding: those cells count neither as input nor as padding.
//
// The average divides by the number of input cells its window reads, or
// with count_include_pad by the number of taps inside the padded input
// (input and explicit padding, not the ceil-mode overhang), as PyTorch's
// avg_pool with count_include_pad=True and ONNX Runtime's AveragePool do.
// The max takes the first maximum in window order (depth, rows, columns),
// and its gradient goes there, as the 2-D kernel's does.

// poolAxis is a windowed pool's geometry along one spatial axis.
type poolAxis struct {
	in, k, s, d int // input size, window taps, stride, dilation
	lo, hi      int // padding before and after the input
	out         int

	taps [][]int // each output's taps inside the input, in order
	pads []int   // each output's taps inside the padded input (count_include_pad's divisor factor)
}

// newPoolAxis computes an axis's output size and windows, or an error when
// the dilated window does not fit the padded input or a window would read
// no input cell. k, s and d must be positive and lo, hi non-negative.
func newPoolAxis(in, k, s, d, lo, hi int, ceil bool) (poolAxis, error) {
	a := poolAxis{in: in, k: k, s: s, d: d, lo: lo, hi: hi}
	eff := (k-1)*d + 1
	span := in + lo + hi - eff
	if span < 0 {
		return a, fmt.Errorf("dilated window %d is larger than the padded input %d", eff, in+lo+hi)
	}
	a.out = span/s + 1
	if ceil {
		a.out = (span+s-1)/s + 1
		if (a.out-1)*s >= in+lo {
			a.out--
		}
	}
	a.taps, a.pads = make([][]int, a.out), make([]int, a.out)
	for o := range a.out {
		start := o*s - lo
		for t := range k {
			p := start + t*d
			if p >= 0 && p < in {
				a.taps[o] = append(a.taps[o], p)
			}
			if p < in+hi {
				a.pads[o]++
			}
		}
		if len(a.taps[o]) == 0 {
			return a, fmt.Errorf("window %d (taps %d..%d step %d) reads no input cell of %d; lower the padding or the dilation",
				o, start, start+(k-1)*d, d, in)
		}
	}
	return a, nil
}

// samePadAxis is TensorFlow's SAME padding along one axis, as SamePadding
// computes it for two: out = ceil(in / s), total padding
// max((out−1)·s + (k−1)·d + 1 − in, 0), the odd cell at the end.
func samePadAxis(in, k, s, d int) (lo, hi int) {
	out := (in + s - 1) / s
	total := max((out-1)*s+(k-1)*d+1-in, 0)
	return total / 2, total - total/2
}

// poolWindows is a windowed pool over planes of [D, H, W] cells (a 2-D
// pool has D = 1): ax[0] is depth, ax[1] height, ax[2] width.
type poolWindows struct {
	planes  int
	ax      [3]poolAxis
	max     bool
	inclPad bool // the average divides by the padded window (count_include_pad)
}

// inPlane and outPlane are the cells of one input and one output plane.
func (p *poolWindows) inPlane() int  { return p.ax[0].in * p.ax[1].in * p.ax[2].in }
func (p *poolWindows) outPlane() int { return p.ax[0].out * p.ax[1].out * p.ax[2].out }

// divisor is the average's divisor for output (od, oh, ow).
func (p *poolWindows) divisor(od, oh, ow int) int {
	if p.inclPad {
		return p.ax[0].pads[od] * p.ax[1].pads[oh] * p.ax[2].pads[ow]
	}
	return len(p.ax[0].taps[od]) * len(p.ax[1].taps[oh]) * len(p.ax[2].taps[ow])
}

// each calls fn for every window of planes [lo, hi), in output order,
// with its plane c, its flat output index o, the plane offsets of the
// input cells it reads in window order (depth, rows, columns; a buffer fn
// must not keep) and the average's divisor.
func (p *poolWindows) each(lo, hi int, fn func(c, o int, cells []int, div int)) {
	h, w, outP := p.ax[1].in, p.ax[2].in, p.outPlane()
	var cells []int
	for c := lo; c < hi; c++ {
		o := c * outP
		for od, td := range p.ax[0].taps {
			for oh, th := range p.ax[1].taps {
				for ow, tw := range p.ax[2].taps {
					cells = cells[:0]
					for _, i := range td {
						for _, j := range th {
							row := (i*h + j) * w
							for _, k := range tw {
								cells = append(cells, row+k)
							}
						}
					}
					fn(c, o, cells, p.divisor(od, oh, ow))
					o++
				}
			}
		}
	}
}

// poolWindowsForward writes each window's maximum into y and its flat
// input index into arg when arg is non-nil (max pool), else each window's
// mean. Planes are spread over goroutines; each writes only its own plane.
func poolWindowsForward[T tensor.Float](p *poolWindows, arg []int, x, y []T) {
	inP := p.inPlane()
	par.ForBatch(p.planes, func(_, lo, hi int) {
		p.each(lo, hi, func(c, o int, cells []int, div int) {
			xc := x[c*inP : (c+1)*inP]
			if arg != nil {
				at := cells[0]
				best := xc[at]
				for _, i := range cells[1:] {
					if v := xc[i]; v > best {
						best, at = v, i
					}
				}
				y[o], arg[o] = best, c*inP+at
				return
			}
			var s T
			for _, i := range cells {
				s += xc[i]
			}
			y[o] = s / T(div)
		})
	})
}

// poolWindowsBackward adds the gradient dy of the pool of x into dx: for
// max pool each dy to its window's first maximum (recomputed from x by
// the forward kernel, so ties go where Forward's went), for average pool
// each dy divided by its divisor to every input cell its window read.
func poolWindowsBackward[T tensor.Float](p *poolWindows, x, dy, dx []T) {
	if p.max {
		y, arg := getScratch[T](len(dy)), getScratch[int](len(dy))
		poolWindowsForward(p, *arg, x, *y)
		outP := p.outPlane()
		par.ForBatch(p.planes, func(_, lo, hi int) {
			for o, at := range (*arg)[lo*outP : hi*outP] {
				dx[at] += dy[lo*outP+o]
			}
		})
		putScratch(arg)
		putScratch(y)
		return
	}
	inP := p.inPlane()
	par.ForBatch(p.planes, func(_, lo, hi int) {
		p.each(lo, hi, func(c, o int, cells []int, div int) {
			dxc, g := dx[c*inP:(c+1)*inP], dy[o]/T(div)
			for _, i := range cells {
				dxc[i] += g
			}
		})
	})
}

// runPoolWindows is the Forward of a windowed pool: the output [lead...,
// out dims] (lead are x's leading dims, whose product is p.planes).
func runPoolWindows(p *poolWindows, x *tensor.Tensor, shape []int) *tensor.Tensor {
	out := tensor.Empty(x.DType(), shape...) // one write per window
	switch {
	case x.DType() == tensor.Float32 && p.max:
		arg := getScratch[int](out.Size())
		poolWindowsForward(p, *arg, x.Float32s(), out.Float32s())
		putScratch(arg)
	case x.DType() == tensor.Float32:
		poolWindowsForward(p, nil, x.Float32s(), out.Float32s())
	case p.max:
		arg := getScratch[int](out.Size())
		poolWindowsForward(p, *arg, x.Float64s(), out.Float64s())
		putScratch(arg)
	default:
		poolWindowsForward(p, nil, x.Float64s(), out.Float64s())
	}
	return out
}

// gradPoolWindows is the Backward of a windowed pool: x's gradient.
func gradPoolWindows(p *poolWindows, x, gout *tensor.Tensor) *tensor.Tensor {
	gx := tensor.ZerosLike(x)
	switch x.DType() {
	case tensor.Float32:
		poolWindowsBackward(p, x.Float32s(), gout.Float32s(), gx.Float32s())
	case tensor.Float64:
		poolWindowsBackward(p, x.Float64s(), gout.Float64s(), gx.Float64s())
	}
	return gx
}
