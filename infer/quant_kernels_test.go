package infer

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/internal/qgemm"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/tensor"
)

// convRef is the textbook int8 convolution on uint8 NHWC activations:
// acc = Σ (x − zx)·w over the window (a tap in the padding is the zero
// point, so adds nothing), then GemmUint8's requantization (multiplier
// sx·sw/sy, bias/sy, round half to even, saturate, ReLU at the zero
// point), value by value.
func convRef(st *qStage, x []uint8, w []int8, scale, bias []float32, out []uint8) {
	n, h, wd, c := st.in[0], st.in[1], st.in[2], st.in[3]
	oh, ow, o := st.out[1], st.out[2], st.out[3]
	for b := range n {
		for i := range oh {
			for j := range ow {
				for oc := range o {
					var acc int32
					for ki := range st.kh {
						for kj := range st.kw {
							ih, iw := i*st.sh-st.pad[0]+ki*st.dh, j*st.sw-st.pad[2]+kj*st.dw
							if ih < 0 || ih >= h || iw < 0 || iw >= wd {
								continue
							}
							for ch := range c {
								acc += (int32(x[((b*h+ih)*wd+iw)*c+ch]) - int32(st.inQ.Zero)) * int32(w[((oc*c+ch)*st.kh+ki)*st.kw+kj])
							}
						}
					}
					t := float32(acc)*qgemm.RequantMultiplier(st.inQ.Scale, scale[oc], st.outQ.Scale) + bias[oc]/st.outQ.Scale
					q := min(max(math.RoundToEven(float64(t))+float64(st.outQ.Zero), 0), 255)
					if st.ep.ReLU {
						q = max(q, float64(st.outQ.Zero))
					}
					out[((b*oh+i)*ow+j)*o+oc] = uint8(q)
				}
			}
		}
	}
}

func randU8(rng *rand.Rand, n int) []uint8 {
	v := make([]uint8, n)
	for i := range v {
		v[i] = uint8(rng.IntN(256))
	}
	return v
}

// The int8 convolution (channels-last im2col, then qgemm with the
// requantizing epilogue) equals the textbook loop exactly on odd shapes,
// strides, padding and dilation, 1×1 kernels (read in place) included,
// with an output scale small enough that values saturate at both ends.
func TestQuantConvMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 1))
	type geo struct{ n, h, w, c, o, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr int }
	cases := []geo{
		{2, 28, 28, 1, 20, 5, 5, 1, 1, 1, 1, 0, 0, 0, 0},
		{3, 12, 12, 20, 50, 5, 5, 1, 1, 1, 1, 0, 0, 0, 0},
		{1, 7, 9, 3, 5, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1},
		{2, 11, 6, 5, 17, 3, 2, 1, 2, 2, 1, 2, 0, 1, 3},
		{2, 5, 5, 13, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
		{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
		{5, 9, 9, 4, 3, 3, 3, 3, 3, 1, 1, 0, 2, 0, 2},
	}
	saturated := 0
	for ci, g := range cases {
		oh := (g.h+g.pt+g.pb-((g.kh-1)*g.dh+1))/g.sh + 1
		ow := (g.w+g.pl+g.pr-((g.kw-1)*g.dw+1))/g.sw + 1
		st := &qStage{kind: stConv, in: [4]int{g.n, g.h, g.w, g.c}, out: [4]int{g.n, oh, ow, g.o}, kh: g.kh, kw: g.kw, sh: g.sh, sw: g.sw, dh: g.dh, dw: g.dw,
			pad: [4]int{g.pt, g.pb, g.pl, g.pr}, inQ: actQuant{Scale: 0.03, Zero: uint8(rng.IntN(256))}, outQ: actQuant{Scale: 0.05, Zero: uint8(rng.IntN(200))}}
		shape := []int{g.o, g.c, g.kh, g.kw}
		w := make([]int8, g.o*g.c*g.kh*g.kw)
		for i := range w {
			w[i] = int8(rng.IntN(127) - 63)
		}
		scale, bias := make([]float32, g.o), make([]float32, g.o)
		for j := range scale {
			scale[j], bias[j] = 0.002+0.01*rng.Float32(), rng.Float32()-0.5
		}
		k, nout, b := gemmB("conv2d", shape, func(i int) int8 { return w[i] })
		pb, err := qgemm.PackB(k, nout, b, nout)
		require.NoError(t, err)
		st.pb = pb
		st.ep = qgemm.Epilogue{ScaleA: st.inQ.Scale, ScaleB: scale, Bias: bias, ReLU: ci%2 == 0}
		x := randU8(rng, size4(st.in))
		want := make([]uint8, size4(st.out))
		convRef(st, x, w, scale, bias, want)
		got := make([]uint8, size4(st.out))
		sc := &qScratch{col: make([]uint8, size4(st.out)/g.o*k+8)}
		require.NoError(t, st.product(x, got, sc, nil))
		require.Equal(t, want, got, "case %d %+v", ci, g)
		for _, v := range want {
			if v == 0 || v == 255 {
				saturated++
			}
		}
	}
	require.Greater(t, saturated, 100)
}

// Max pooling on uint8 NHWC equals the textbook loop over the valid taps,
// with padding, strides other than the window and odd sizes.
func TestMaxPoolU8(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 2))
	for _, g := range []struct{ n, h, w, c, kh, kw, sh, sw, pt, pb, pl, pr int }{
		{2, 24, 24, 20, 2, 2, 2, 2, 0, 0, 0, 0},
		{1, 7, 5, 3, 3, 3, 2, 2, 1, 1, 1, 1},
		{3, 5, 9, 1, 2, 3, 1, 2, 0, 1, 2, 0},
		{2, 7, 9, 5, 3, 2, 1, 2, 0, 0, 0, 0},
		{1, 6, 6, 11, 3, 3, 3, 3, 0, 0, 0, 0},
	} {
		oh := (g.h+g.pt+g.pb-g.kh)/g.sh + 1
		ow := (g.w+g.pl+g.pr-g.kw)/g.sw + 1
		st := &qStage{kind: stPool, in: [4]int{g.n, g.h, g.w, g.c}, out: [4]int{g.n, oh, ow, g.c}, kh: g.kh, kw: g.kw, sh: g.sh, sw: g.sw, dh: 1, dw: 1, pad: [4]int{g.pt, g.pb, g.pl, g.pr}}
		x := randU8(rng, size4(st.in))
		got := make([]uint8, size4(st.out))
		maxPoolU8(st, x, got)
		for b := range g.n {
			for i := range oh {
				for j := range ow {
					for ch := range g.c {
						m := -1
						for ki := range g.kh {
							for kj := range g.kw {
								ih, iw := i*g.sh-g.pt+ki, j*g.sw-g.pl+kj
								if ih >= 0 && ih < g.h && iw >= 0 && iw < g.w {
									m = max(m, int(x[((b*g.h+ih)*g.w+iw)*g.c+ch]))
								}
							}
						}
						require.Equal(t, uint8(m), got[((b*oh+i)*ow+j)*g.c+ch])
					}
				}
			}
		}
	}
}

// The input quantization transposes NCHW to NHWC, rounds half to even
// and saturates; dequantization transposes back.
func TestQuantizeInAndDequant(t *testing.T) {
	aq := actQuant{Scale: 0.5, Zero: 10}
	// [1, 2, 1, 3]: channel 0 then channel 1.
	x := []float32{0.25, 0.75, -5.25, 200, -200, 1.25}
	q := make([]uint8, 6)
	quantizeIn(x, []int{1, 2, 1, 3}, aq, q, make([]float32, 6))
	// round(x/0.5) + 10, half to even: 0.5→0, 1.5→2, -10.5→-10, 400, -400, 2.5→2.
	require.Equal(t, []uint8{10, 255, 12, 0, 0, 12}, q)
	y := make([]float32, 6)
	dequantNCHW(q, [4]int{1, 1, 3, 2}, aq, y)
	require.Equal(t, []float32{0, 1, -5, 122.5, -5, 1}, y)
	r := make([]uint8, 3)
	reluU8([]uint8{3, 10, 200}, r, 10)
	require.Equal(t, []uint8{10, 10, 200}, r)
}

// The segment's boundary transposes (8×8 vector blocks plus plain
// edges) equal plain loops on shapes with and without whole blocks:
// quantizeIn's NCHW → NHWC with its rounding and saturation, and
// nhwcToNCHW.
func TestSegmentTransposesMatchLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	aq := actQuant{Scale: 0.03, Zero: 17}
	for _, d := range [][4]int{{2, 13, 5, 7}, {1, 16, 8, 8}, {3, 3, 32, 32}, {1, 64, 8, 8}, {2, 9, 3, 1}, {1, 1, 1, 1}} {
		n, c, h, w := d[0], d[1], d[2], d[3]
		x := make([]float32, n*c*h*w)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 4) // some beyond the range, to saturate
		}
		q := make([]uint8, len(x))
		quantizeIn(x, []int{n, c, h, w}, aq, q, make([]float32, c*h*w))
		y := make([]float32, len(x))
		nhwcToNCHW(x, [4]int{n, h, w, c}, y)
		for b := range n {
			for ch := range c {
				for p := range h * w {
					nchw, nhwc := (b*c+ch)*h*w+p, (b*h*w+p)*c+ch
					require.Equal(t, qgemm.QuantizeLinearU8(x[nchw], aq.Scale, aq.Zero), q[nhwc], "quantizeIn %v at %d", d, nchw)
					require.Equal(t, x[nhwc], y[nchw], "nhwcToNCHW %v at %d", d, nchw)
				}
			}
		}
	}
}

// addU8 equals a plain float64 reference of QLinearAdd (+ ReLU) on odd
// lengths, with operands whose sum saturates at both ends and ties that
// round half to even; a one-off table pins the rounding.
func TestAddU8MatchesReference(t *testing.T) {
	ref := func(a, r uint8, aq, rq, oq actQuant, relu bool) uint8 {
		ma, mr := aq.Scale/oq.Scale, rq.Scale/oq.Scale
		x := float64(float32((float32(a)-float32(aq.Zero))*ma)+float32((float32(r)-float32(rq.Zero))*mr)) + float64(oq.Zero)
		lo := 0.0
		if relu {
			lo = float64(oq.Zero)
		}
		return uint8(math.RoundToEven(min(max(x, lo), 255)))
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 7, 33, 1001} {
		for _, relu := range []bool{false, true} {
			aq := actQuant{Scale: 0.01 + rng.Float32()*0.1, Zero: uint8(rng.IntN(256))}
			rq := actQuant{Scale: 0.01 + rng.Float32()*0.1, Zero: uint8(rng.IntN(256))}
			oq := actQuant{Scale: 0.01 + rng.Float32()*0.05, Zero: uint8(rng.IntN(200))}
			a, r, out := randU8(rng, n), randU8(rng, n), make([]uint8, n)
			addU8(a, aq, r, rq, oq, relu, out)
			for i := range a {
				require.Equal(t, ref(a[i], r[i], aq, rq, oq, relu), out[i], "n %d relu %v at %d", n, relu, i)
			}
		}
	}
	// Scales 1: (a − 10) + (r − 20) + 5 exactly; halves: (a − 0)·0.5.
	out := make([]uint8, 4)
	addU8([]uint8{0, 255, 12, 40}, actQuant{Scale: 1, Zero: 10}, []uint8{0, 255, 20, 20}, actQuant{Scale: 1, Zero: 20}, actQuant{Scale: 1, Zero: 5}, true, out)
	require.Equal(t, []uint8{5, 255, 7, 35}, out, "ReLU floor at the zero point, saturation at 255")
	addU8([]uint8{1, 3, 5, 7}, actQuant{Scale: 0.5}, []uint8{0, 0, 0, 0}, actQuant{Scale: 1}, actQuant{Scale: 1}, false, out)
	require.Equal(t, []uint8{0, 2, 2, 4}, out, "0.5, 1.5, 2.5, 3.5 round half to even")
}

// avgPoolU8 equals a plain float64 reference on odd shapes, with
// outputs that saturate (an output scale far below the input's) and a
// table that pins half-even rounding.
func TestAvgPoolU8MatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, d := range [][4]int{{1, 1, 1, 1}, {2, 3, 5, 7}, {3, 8, 8, 64}, {1, 7, 1, 300}} {
		for _, oScale := range []float32{0.05, 0.001} {
			iq := actQuant{Scale: 0.02, Zero: uint8(rng.IntN(256))}
			oq := actQuant{Scale: oScale, Zero: uint8(rng.IntN(256))}
			x := randU8(rng, size4(d))
			out := make([]uint8, d[0]*d[3])
			avgPoolU8(x, d, iq, oq, out)
			hw, c := d[1]*d[2], d[3]
			for b := range d[0] {
				for ch := range c {
					var s float64
					for p := range hw {
						s += float64(int(x[(b*hw+p)*c+ch]) - int(iq.Zero))
					}
					want := math.RoundToEven(s*float64(iq.Scale)/(float64(hw)*float64(oScale))) + float64(oq.Zero)
					require.Equal(t, uint8(min(max(want, 0), 255)), out[b*c+ch], "%v scale %v at %d,%d", d, oScale, b, ch)
				}
			}
		}
	}
	// Two pixels, scales 1, zero points 0: the means 0.5, 1.5, 2.5 round to 0, 2, 2.
	out := make([]uint8, 3)
	avgPoolU8([]uint8{0, 1, 2, 1, 2, 3}, [4]int{1, 1, 2, 3}, actQuant{Scale: 1}, actQuant{Scale: 1}, out)
	require.Equal(t, []uint8{0, 2, 2}, out)
}

// maxBytes gives the bytewise max on every pair of byte values, in every
// position of the eight-byte words and the tail.
func TestMaxBytes(t *testing.T) {
	a, b := make([]uint8, 0, 65536+5), make([]uint8, 0, 65536+5)
	for x := range 256 {
		for y := range 256 {
			a, b = append(a, uint8(x)), append(b, uint8(y))
		}
	}
	a, b = append(a, 0, 255, 7, 128, 127), append(b, 255, 0, 7, 127, 128)
	got := append([]uint8(nil), a...)
	maxBytes(got, b)
	for i := range a {
		require.Equal(t, max(a[i], b[i]), got[i], "max(%d, %d)", a[i], b[i])
	}
}

// The int8 graph of the MNIST CNN holds no float32 weight: every
// constant the segment replaced is let go.
func TestQuantizedGraphDropsFloatWeights(t *testing.T) {
	net, err := mnist.New("cnn", tensor.NewRNG(2))
	require.NoError(t, err)
	x, err := tensor.RandUniform(tensor.NewRNG(3), tensor.Float32, 0, 1, 2, 1, 28, 28)
	require.NoError(t, err)
	g, err := TraceLayer(net, x)
	require.NoError(t, err)
	calib, err := Calibrate(g, [][]*tensor.Tensor{{x}}, CalibOptions{})
	require.NoError(t, err)
	q, err := Quantize(g, calib, QuantOptions{})
	require.NoError(t, err)
	held := 0
	for _, v := range q.Graph.values {
		if v.kind == kindConst && v.c != nil {
			held++
		}
	}
	require.Zero(t, held)
	consts := 0
	for _, v := range g.values {
		if v.kind == kindConst && v.c != nil {
			consts++
		}
	}
	require.Greater(t, consts, 5, "the float graph keeps its weights")
}
