package infer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/plumbml/plumb/internal/qgemm"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// quantSegment is a chain of int8 ops run as one plan step: the float32
// input is quantized to uint8 once, every convolution, linear layer,
// max pool and ReLU of the chain runs on uint8 activations in
// channels-last order (NHWC), each product requantizing its output to
// uint8 in its epilogue (qgemm.GemmUint8) for the next op, and the last
// product dequantizes into the float32 output in its epilogue
// (qgemm.GemmFloat32, bias and ReLU included). No float32 tensor exists
// between two int8 ops. This is the QDQ pattern of ONNX's quantization
// (QuantizeLinear → QLinearConv → MaxPool → QLinearMatMul →
// DequantizeLinear) with each DequantizeLinear fused into its consumer's
// epilogue and each QuantizeLinear into its producer's, as ONNX Runtime's
// QDQ transformer and Paddle's int8 pass fuse them. The uint8 buffers
// live in scratch the op keeps for its calls, so the plan's float arena
// holds only the segment's float32 input and output.
type quantSegment struct {
	name    string
	in      actQuant // the input's quantization
	inRef   Ref      // the input's value in the float graph
	resRef  Ref      // the residual the last product adds (a second input), or -1
	saveIn  bool     // the quantized input is a residual an int8 add reads: kept
	inShape []int    // the float32 input, [N, C, H, W] or [N, K]
	stages  []*qStage
	out     []int // the float32 output's shape
	actMax  int   // the largest uint8 activation, in bytes
	colMax  int   // the largest im2col chunk, in bytes
	fMax    int   // float32 scratch for a channels-last output to transpose
	mu      sync.Mutex
	free    []*qScratch
}

// actQuant is a per-tensor uint8 activation quantization (ONNX
// QuantizeLinear with a uint8 zero point): q = saturate(round(x/Scale) + Zero).
type actQuant struct {
	Scale float32
	Zero  uint8
}

type stageKind uint8

const (
	stConv stageKind = iota
	stLinear
	stPool
	stRelu
	stFlatten
	stAdd
	stGAP
)

// qStage is one int8 op of a segment. Its input and output are uint8
// tensors [N, H, W, C] (a linear layer's [N, K] is [N, 1, 1, K]).
type qStage struct {
	kind   stageKind
	layer  string // the layer's name (conv and linear)
	ref    Ref    // the value of the float graph the stage computes
	in     [4]int // NHWC
	out    [4]int // NHWC
	kh, kw int
	sh, sw int
	dh, dw int
	pad    [4]int // top, bottom, left, right
	pb     *qgemm.PackedB
	ep     qgemm.Epilogue
	inQ    actQuant // the input's quantization
	resQ   actQuant // an int8 add's residual's quantization
	save   bool     // the output is a residual an int8 add of the segment reads later: kept
	outQ   actQuant // the output's (conv and linear with a uint8 output; pool and relu keep their input's)
	last   bool     // the segment's last stage: a product dequantizes into float32
	// residual: the last product adds the segment's second input (float32,
	// the output's shape) to its dequantized output, then the ReLU when
	// postReLU: the residual add of the consumer's epilogue. An int8 add
	// (stAdd) applies the ReLU after it when postReLU.
	residual, postReLU bool
}

// qScratch is one call's buffers.
type qScratch struct {
	a, b []uint8
	col  []uint8
	res  []uint8 // the residual kept for an int8 add
	f    []float32
	in   []float32 // one input image, channels last
}

func (s *quantSegment) Name() string { return s.name }

func (s *quantSegment) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	out := tensor.Zeros(tensor.Float32, s.out...)
	return out, s.ForwardInto(out, in)
}

func (s *quantSegment) Backward([]*tensor.Tensor, *tensor.Tensor, *tensor.Tensor, []bool) ([]*tensor.Tensor, error) {
	return nil, errors.New(s.name + ": an int8 plan's op has no gradient")
}

// ForwardInto is the op's ops.Into.
func (s *quantSegment) ForwardInto(out *tensor.Tensor, in []*tensor.Tensor) error {
	if s.resRef < 0 && (len(in) != 1 || !sameSig(in[0], tensor.Float32, s.inShape)) {
		return ops.Errorf(s.name, in, "want one float32 input %v", s.inShape)
	}
	var res []float32
	if s.resRef >= 0 {
		if len(in) != 2 || !sameSig(in[0], tensor.Float32, s.inShape) || !sameSig(in[1], tensor.Float32, s.out) {
			return ops.Errorf(s.name, in, "want a float32 input %v and a float32 residual %v", s.inShape, s.out)
		}
		res = in[1].Float32s()
	}
	if !sameSig(out, tensor.Float32, s.out) {
		return ops.Errorf(s.name, in, "want a float32 output %v", s.out)
	}
	return s.run(in[0].Float32s(), res, out.Float32s(), nil)
}

func (s *quantSegment) get() *qScratch {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		sc := s.free[n-1]
		s.free = s.free[:n-1]
		return sc
	}
	return &qScratch{a: make([]uint8, s.actMax), b: make([]uint8, s.actMax), col: make([]uint8, s.colMax+8), res: make([]uint8, s.resMax()), f: make([]float32, s.fMax), in: make([]float32, s.inImage())}
}

// resMax is the size of the largest residual the segment keeps.
func (s *quantSegment) resMax() int {
	n := 0
	if s.saveIn {
		n = shapeSize(s.inShape)
	}
	for _, st := range s.stages {
		if st.save {
			n = max(n, size4(st.out))
		}
	}
	return n
}

// inImage is the size of one input image (4-D inputs; 0 for [N, K]).
func (s *quantSegment) inImage() int {
	if len(s.inShape) != 4 {
		return 0
	}
	return s.inShape[1] * s.inShape[2] * s.inShape[3]
}

func (s *quantSegment) put(sc *qScratch) {
	s.mu.Lock()
	s.free = append(s.free, sc)
	s.mu.Unlock()
}

// run computes the segment on x (and the residual res, when the last
// product adds one) into y. capture, when not nil, receives
// each stage's output dequantized to float32 in the float graph's layout
// (NCHW), for the accuracy report.
func (s *quantSegment) run(x, res, y []float32, capture func(st *qStage, v []float32)) error {
	sc := s.get()
	defer s.put(sc)
	cur, next := sc.a, sc.b
	quantizeIn(x, s.inShape, s.in, cur, sc.in)
	if s.saveIn {
		copy(sc.res, cur[:shapeSize(s.inShape)])
	}
	for _, st := range s.stages {
		var err error
		switch st.kind {
		case stConv, stLinear:
			err = st.product(cur, next, sc, y)
			if err == nil && st.residual {
				addResidual(y, res, st.postReLU)
			}
		case stPool:
			maxPoolU8(st, cur, next)
		case stRelu:
			reluU8(cur[:size4(st.in)], next, st.inQ.Zero)
		case stFlatten:
			copy(next, cur[:size4(st.in)])
		case stGAP:
			avgPoolU8(cur[:size4(st.in)], st.in, st.inQ, st.outQ, next)
		case stAdd:
			addU8(cur[:size4(st.in)], st.inQ, sc.res, st.resQ, st.outQ, st.postReLU, next)
		}
		if st.save {
			copy(sc.res, next[:size4(st.out)])
		}
		if err != nil {
			return fmt.Errorf("%s: %s: %w", s.name, st.layer, err)
		}
		if st.last && st.kind != stConv && st.kind != stLinear {
			dequantNCHW(next[:size4(st.out)], st.out, st.outQ, y)
		}
		if capture != nil {
			v := make([]float32, size4(st.out))
			switch {
			case st.last:
				copy(v, y)
			case st.kind == stFlatten: // the float graph flattens NCHW
				dequantNCHW(next[:size4(st.in)], st.in, st.outQ, v)
			default:
				dequantNCHW(next[:size4(st.out)], st.out, st.outQ, v)
			}
			capture(st, v)
		}
		cur, next = next, cur
	}
	return nil
}

func size4(d [4]int) int { return d[0] * d[1] * d[2] * d[3] }

// quantizeIn quantizes the float32 input (NCHW, or [N, K]) into q,
// channels last: each image is first transposed to [H·W, C] in f (the
// vector transpose, transposeFloat), then quantized in one contiguous
// pass. f holds at least one image.
func quantizeIn(x []float32, shape []int, aq actQuant, q []uint8, f []float32) {
	if len(shape) != 4 {
		quantizeU8(x, aq, q)
		return
	}
	n, c, hw := shape[0], shape[1], shape[2]*shape[3]
	per := c * hw
	f = f[:per]
	for b := range n {
		transposeFloat(f, c, x[b*per:(b+1)*per], hw, c, hw)
		quantizeU8(f, aq, q[b*per:(b+1)*per])
	}
}

// quantizeU8 is QuantizeLinear with a uint8 zero point over x into q.
func quantizeU8(x []float32, aq actQuant, q []uint8) {
	q = q[:len(x)]
	for i, v := range x {
		q[i] = qgemm.QuantizeLinearU8(v, aq.Scale, aq.Zero)
	}
}

// transposeFloat writes the r×c matrix src (row stride lds) transposed
// into dst (row stride ldd): dst[j·ldd+i] = src[i·lds+j], the 8×8 blocks
// by vec.TransposeBlocks and the edges by a plain loop.
func transposeFloat(dst []float32, ldd int, src []float32, lds, r, c int) {
	rows, cols := vec.TransposeBlocks(dst, ldd, src, lds, r, c, false)
	for i := range r {
		j0 := cols
		if i >= rows {
			j0 = 0
		}
		for j := j0; j < c; j++ {
			dst[j*ldd+i] = src[i*lds+j]
		}
	}
}

// dequantNCHW writes the uint8 tensor q ([N, H, W, C]) dequantized
// (ONNX DequantizeLinear: (q − Zero)·Scale) into y in NCHW order.
func dequantNCHW(q []uint8, d [4]int, aq actQuant, y []float32) {
	n, hw, c := d[0], d[1]*d[2], d[3]
	for b := range n {
		for p := range hw {
			src := q[(b*hw+p)*c : (b*hw+p+1)*c]
			for ch, v := range src {
				y[(b*c+ch)*hw+p] = float32(int32(v)-int32(aq.Zero)) * aq.Scale
			}
		}
	}
}

// addResidual adds res to y in place, then applies ReLU when relu is
// set: the residual add and activation of the last product's float32
// epilogue.
func addResidual(y, res []float32, relu bool) {
	res = res[:len(y)]
	for i, v := range res {
		v += y[i]
		if relu && !(v > 0) {
			v = 0
		}
		y[i] = v
	}
}

// addU8 is the int8 residual add (ONNX QLinearAdd, then an optional
// ReLU): each output is requantized from both operands' dequantized
// values, q = saturate(roundHalfEven((a − Za)·Sa/So + (r − Zr)·Sr/So) +
// Zo), saturating at Zo (the quantized 0) instead of 0 when relu is set.
// The sum is float32, each product rounded to float32 on its own (no
// fused multiply-add) and looked up in a 256-entry table per operand. It
// is rounded half to even by adding and subtracting 1.5·2^23, exact for
// sums below 2^22 in magnitude (every table entry is checked to be below
// 2^20, else the plain loop runs), and clamped as an integer, without
// branches: with a ReLU half the sums are negative at random, which a
// branch would mispredict.
func addU8(a []uint8, aq actQuant, r []uint8, rq, oq actQuant, relu bool, out []uint8) {
	r, out = r[:len(a)], out[:len(a)]
	ma, mr := aq.Scale/oq.Scale, rq.Scale/oq.Scale
	var ta, tr [256]float32
	small := true
	for q := range 256 {
		ta[q] = float32((float32(q) - float32(aq.Zero)) * ma)
		tr[q] = float32((float32(q) - float32(rq.Zero)) * mr)
		small = small && math.Abs(float64(ta[q])) < 1<<20 && math.Abs(float64(tr[q])) < 1<<20
	}
	zo := float32(oq.Zero)
	lo := int32(0)
	if relu {
		lo = int32(oq.Zero)
	}
	if !small {
		for i, v := range a {
			x := math.RoundToEven(float64(ta[v] + tr[r[i]] + zo))
			out[i] = uint8(min(max(x, float64(lo)), 255))
		}
		return
	}
	const magic = 12582912 // 1.5·2^23
	for i, v := range a {
		x := int32(float32(ta[v]+tr[r[i]]+zo+magic) - magic)
		out[i] = uint8(min(max(x, lo), 255))
	}
}

// avgPoolU8 is global average pooling on uint8 activations x (NHWC,
// dims d) into out ([N, C]), requantized to oq: q = saturate(
// roundHalfEven((Σ(x − Zi))·Si/(H·W·So)) + Zo), the sum exact in int32
// (ONNX's QLinearGlobalAveragePool from com.microsoft).
func avgPoolU8(x []uint8, d [4]int, iq, oq actQuant, out []uint8) {
	n, hw, c := d[0], d[1]*d[2], d[3]
	m := float64(iq.Scale) / (float64(hw) * float64(oq.Scale))
	for b := range n {
		img := x[b*hw*c : (b+1)*hw*c]
		for ch := range c {
			s := int32(0)
			for p := ch; p < len(img); p += c {
				s += int32(img[p])
			}
			v := math.RoundToEven(float64(s-int32(hw)*int32(iq.Zero))*m) + float64(oq.Zero)
			out[b*c+ch] = uint8(min(max(v, 0), 255))
		}
	}
}

// reluU8 is ReLU on a uint8 tensor with zero point zero: max(q, zero),
// the quantized value of 0.
func reluU8(q, out []uint8, zero uint8) {
	for i, v := range q {
		out[i] = max(v, zero)
	}
}

// maxPoolU8 is max pooling on uint8 activations (NHWC): the quantization
// is monotonic, so the max of the quantized values is the quantized max
// and the output keeps the input's scale and zero point. Padding takes
// no part in a window's max, as in ONNX MaxPool.
func maxPoolU8(st *qStage, x, y []uint8) {
	n, h, w, c := st.in[0], st.in[1], st.in[2], st.in[3]
	oh, ow := st.out[1], st.out[2]
	if st.pad == [4]int{} {
		maxPoolRowsU8(st, x, y)
		return
	}
	for b := range n {
		for i := range oh {
			for j := range ow {
				dst := y[((b*oh+i)*ow+j)*c:][:c]
				first := true
				for ki := range st.kh {
					ih := i*st.sh - st.pad[0] + ki*st.dh
					if ih < 0 || ih >= h {
						continue
					}
					for kj := range st.kw {
						iw := j*st.sw - st.pad[2] + kj*st.dw
						if iw < 0 || iw >= w {
							continue
						}
						src := x[((b*h+ih)*w+iw)*c:][:c]
						if first {
							copy(dst, src)
							first = false
							continue
						}
						for ch, v := range src {
							dst[ch] = max(dst[ch], v)
						}
					}
				}
				if first { // a window of padding only
					for ch := range dst {
						dst[ch] = st.inQ.Zero
					}
				}
			}
		}
	}
}

// maxPoolRowsU8 is maxPoolU8 without padding: per output row, the
// window's input rows are first reduced to one (a max over whole rows of
// W·C contiguous bytes), then each output's KW groups of C bytes.
func maxPoolRowsU8(st *qStage, x, y []uint8) {
	n, h, w, c := st.in[0], st.in[1], st.in[2], st.in[3]
	oh, ow := st.out[1], st.out[2]
	row := w * c
	var buf [4096]uint8
	tmp := buf[:0]
	if row > len(buf) {
		tmp = make([]uint8, row)
	}
	tmp = tmp[:row]
	for b := range n {
		for i := range oh {
			ih := i * st.sh
			copy(tmp, x[(b*h+ih)*row:][:row])
			for ki := 1; ki < st.kh; ki++ {
				maxBytes(tmp, x[(b*h+ih+ki*st.dh)*row:][:row])
			}
			for j := range ow {
				dst := y[((b*oh+i)*ow+j)*c:][:c]
				iw := j * st.sw
				if st.kw == 1 {
					copy(dst, tmp[iw*c:][:c])
					continue
				}
				maxBytesInto(dst, tmp[iw*c:][:c], tmp[(iw+st.dw)*c:][:c])
				for kj := 2; kj < st.kw; kj++ {
					maxBytes(dst, tmp[(iw+kj*st.dw)*c:][:c])
				}
			}
		}
	}
}

// maxBytes sets a[i] = max(a[i], b[i]), eight bytes at a time as one
// uint64 (SWAR): per byte, a ≥ b unsigned is read from the top bit of
// (a|H) − (b&^H) (the low seven bits' difference, no borrow across bytes)
// combined with the top bits themselves.
func maxBytes(a, b []uint8) { maxBytesInto(a, a, b) }

// maxBytesInto sets dst[i] = max(a[i], b[i]) (maxBytes's SWAR words);
// dst may be a.
func maxBytesInto(dst, a, b []uint8) {
	a, b = a[:len(dst)], b[:len(dst)]
	i := 0
	for ; i+8 <= len(dst); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], maxWord(binary.LittleEndian.Uint64(a[i:]), binary.LittleEndian.Uint64(b[i:])))
	}
	for ; i < len(dst); i++ {
		dst[i] = max(a[i], b[i])
	}
}

// maxWord is the bytewise unsigned max of two words of eight bytes.
func maxWord(x, y uint64) uint64 {
	const hi = 0x8080808080808080
	t := (x | hi) - (y &^ hi)
	ge := ((x &^ y) | (^(x ^ y) & t)) & hi // top bit of each byte: x ≥ y
	mask := (ge >> 7) * 0xff
	return (x & mask) | (y &^ mask)
}

// chunkRows is about how many output rows of a convolution are gathered
// (im2col) and multiplied at a time: enough for the GEMM's blocking, few
// enough that the gathered rows stay in cache.
const chunkRows = 512

// product runs a convolution (im2col over uint8 NHWC, then the int8
// GEMM) or a linear layer; its output is uint8 (cur's next activation,
// in out) or, for the segment's last stage, float32 into y (NCHW for a
// convolution).
func (st *qStage) product(x, out []uint8, sc *qScratch, y []float32) error {
	_, n := st.pb.Dims()
	rq := qgemm.RequantU8{Scale: st.outQ.Scale, Zero: st.outQ.Zero}
	gemm := func(m int, a []uint8, lda int, row0 int) error {
		if !st.last {
			return qgemm.GemmUint8(m, a, lda, st.inQ.Zero, st.pb, &st.ep, rq, out[row0*n:], n)
		}
		if st.kind == stLinear {
			return qgemm.GemmFloat32(m, a, lda, st.inQ.Zero, st.pb, &st.ep, y[row0*n:], n)
		}
		return qgemm.GemmFloat32(m, a, lda, st.inQ.Zero, st.pb, &st.ep, sc.f[row0*n:], n)
	}
	if st.kind == stLinear {
		k, _ := st.pb.Dims()
		return gemm(st.in[0], x, k, 0)
	}
	nb, h, w, c := st.in[0], st.in[1], st.in[2], st.in[3]
	oh, ow := st.out[1], st.out[2]
	k := st.kh * st.kw * c
	perImage := oh * ow
	direct := st.kh == 1 && st.kw == 1 && st.sh == 1 && st.sw == 1 && st.pad == [4]int{}
	if direct { // a 1×1 convolution reads its input as the GEMM's A
		if err := gemm(nb*perImage, x, c, 0); err != nil {
			return err
		}
	} else {
		imgs := max(1, chunkRows/max(perImage, 1))
		for b0 := 0; b0 < nb; b0 += imgs {
			bn := min(imgs, nb-b0)
			col := sc.col[:bn*perImage*k]
			for b := range bn {
				// The gather may write up to 8 bytes past an image's
				// rows: into the next image's, or the buffer's slack.
				im2colU8(x[(b0+b)*h*w*c:], h, w, c, st, sc.col[b*perImage*k:])
			}
			if err := gemm(bn*perImage, col, k, b0*perImage); err != nil {
				return err
			}
		}
	}
	if st.last { // channels last to the float graph's NCHW
		nhwcToNCHW(sc.f[:size4(st.out)], st.out, y)
	}
	return nil
}

// im2colU8 gathers one image's convolution windows (x is [H, W, C]
// uint8) into rows of KH·KW·C bytes, (kh, kw, c) order, one row per
// output position; taps in the padding take the input's zero point, the
// quantized value of 0.
func im2colU8(x []uint8, h, w, c int, st *qStage, col []uint8) {
	oh, ow := st.out[1], st.out[2]
	if st.pad == [4]int{} && st.dw == 1 {
		im2colValidU8(x, w, c, st, col)
		return
	}
	zp := st.inQ.Zero
	span := st.kw * c // one kernel row's bytes, contiguous in x when dw = 1
	p := 0
	for i := range oh {
		for j := range ow {
			iw0 := j*st.sw - st.pad[2]
			inside := st.dw == 1 && iw0 >= 0 && iw0+st.kw <= w
			for ki := range st.kh {
				ih := i*st.sh - st.pad[0] + ki*st.dh
				if ih < 0 || ih >= h {
					fill(col[p:p+span], zp)
					p += span
					continue
				}
				if inside {
					copy(col[p:p+span], x[(ih*w+iw0)*c:])
					p += span
					continue
				}
				for kj := range st.kw {
					iw := iw0 + kj*st.dw
					dst := col[p : p+c]
					p += c
					if iw < 0 || iw >= w {
						fill(dst, zp)
						continue
					}
					copy(dst, x[(ih*w+iw)*c:])
				}
			}
		}
	}
}

// im2colValidU8 is im2colU8 without padding and with dw = 1, where each
// kernel row is one contiguous span of KW·C bytes: a span of at most 8
// bytes (a one-channel image's) moves as one 8-byte word, the bytes past
// it overwritten by the next span, except where the word would leave x
// or col.
func im2colValidU8(x []uint8, w, c int, st *qStage, col []uint8) {
	oh, ow, kh := st.out[1], st.out[2], st.kh
	span := st.kw * c
	rowStep := st.dh * w * c // from one kernel row to the next, in x
	sh, sw := st.sh*w*c, st.sw*c
	p := 0
	if span <= 8 {
		last := (oh-1)*sh + (ow-1)*sw + (kh-1)*rowStep // the last span's start
		if last+8 <= len(x) && oh*ow*kh*span+8 <= len(col) {
			for i := range oh {
				for j := range ow {
					s := i*sh + j*sw
					for range kh {
						*(*[8]byte)(col[p:]) = *(*[8]byte)(x[s:])
						p += span
						s += rowStep
					}
				}
			}
			return
		}
	}
	for i := range oh {
		for j := range ow {
			s := i*sh + j*sw
			for range kh {
				copy(col[p:p+span], x[s:s+span])
				p += span
				s += rowStep
			}
		}
	}
}

// fill sets every byte of b to v, doubling the filled prefix with copy.
func fill(b []uint8, v uint8) {
	if len(b) == 0 {
		return
	}
	b[0] = v
	for n := 1; n < len(b); n *= 2 {
		copy(b[n:], b[:n])
	}
}

// nhwcToNCHW transposes f ([N, H, W, C]) into y ([N, C, H, W]).
func nhwcToNCHW(f []float32, d [4]int, y []float32) {
	n, hw, c := d[0], d[1]*d[2], d[3]
	per := hw * c
	for b := range n {
		transposeFloat(y[b*per:(b+1)*per], hw, f[b*per:(b+1)*per], c, hw, c)
	}
}
