//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// dev is the GPU every test runs on, opened once by TestMain.
var dev *Device

func TestMain(m *testing.M) {
	var err error
	if dev, err = Open(0); err != nil {
		fmt.Fprintln(os.Stderr, "cuda tests need a GPU:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "cuda tests on", dev.Name())
	code := m.Run()
	if err := dev.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		code = 1
	}
	os.Exit(code)
}

// GPU tolerances, |got - want| <= atol + rtol·|want| against the CPU
// reference kernels, which compute elementwise ops and sums in float64
// before rounding to float32:
//   - tolElementwise: one float32 libm call per element (expf, erff,
//     tanhf, powf are within 2 ulp), so a few float32 ulp.
//   - tolReduce: softmax, losses and pools round each row's max and
//     log-sum-exp to float32 before reuse, a few ulp of the row's scale.
//   - tolGEMM: GEMM and conv accumulate K products in float32 in an order
//     of their own; the error grows like sqrt(K)·ulp of the sum of |terms|.
var (
	tolElementwise = tol{rtol: 1e-5, atol: 1e-6}
	tolReduce      = tol{rtol: 1e-5, atol: 1e-5}
	tolGEMM        = tol{rtol: 1e-4, atol: 1e-4}
)

type tol struct{ rtol, atol float64 }

// requireClose compares the buffer got with the host tensor want.
func requireClose(t *testing.T, want *tensor.Tensor, got *Buffer, tl tol, what string) {
	t.Helper()
	require.NotNil(t, got, what)
	h, err := got.Download()
	require.NoError(t, err, what)
	requireCloseHost(t, want, h, tl, what)
}

// requireCloseHost compares the host tensors got and want.
func requireCloseHost(t *testing.T, want, h *tensor.Tensor, tl tol, what string) {
	t.Helper()
	require.Equal(t, want.Shape(), h.Shape(), what)
	worst, at := 0.0, -1
	for i := 0; i < want.Size(); i++ {
		w, g := want.At(i), h.At(i)
		// NaN matches NaN and an infinity the same infinity (a reduction
		// over an empty axis gives TF's -inf for max and logsumexp).
		if math.IsNaN(w) && math.IsNaN(g) || math.IsInf(w, 0) && w == g {
			continue
		}
		if excess := math.Abs(g-w) - (tl.atol + tl.rtol*math.Abs(w)); excess > worst || math.IsNaN(excess) {
			worst, at = excess, i
			if math.IsNaN(excess) {
				break
			}
		}
	}
	if at >= 0 {
		t.Fatalf("%s: element %d is %v, want %v (tolerance atol %g rtol %g)", what, at, h.At(at), want.At(at), tl.atol, tl.rtol)
	}
}

// up uploads t, failing the test on error; the buffer is freed at cleanup.
func up(t *testing.T, x *tensor.Tensor) *Buffer {
	t.Helper()
	b, err := dev.Upload(x)
	require.NoError(t, err)
	t.Cleanup(func() { b.Free() })
	return b
}

func randn(t *testing.T, rng *rand.Rand, shape ...int) *tensor.Tensor {
	t.Helper()
	x, err := tensor.RandNormal(rng, tensor.Float32, 0, 1, shape...)
	require.NoError(t, err)
	return x
}

func uniform(t *testing.T, rng *rand.Rand, lo, hi float64, shape ...int) *tensor.Tensor {
	t.Helper()
	x, err := tensor.RandUniform(rng, tensor.Float32, lo, hi, shape...)
	require.NoError(t, err)
	return x
}

// cpuOp runs op forward on in and backward with gout, asking for every
// input's gradient that need names.
func cpuOp(t *testing.T, op ops.Op, in []*tensor.Tensor, gout *tensor.Tensor, need []bool) (*tensor.Tensor, []*tensor.Tensor) {
	t.Helper()
	out, err := op.Forward(in)
	require.NoError(t, err)
	if gout == nil {
		return out, nil
	}
	grads, err := op.Backward(in, out, gout, need)
	require.NoError(t, err)
	return out, grads
}

func TestRoundTripAndErrors(t *testing.T) {
	rng := tensor.NewRNG(1)
	x := randn(t, rng, 3, 5)
	b := up(t, x)
	h, err := b.Download()
	require.NoError(t, err)
	require.Equal(t, x.Float32s(), h.Float32s())

	empty := up(t, tensor.Zeros(tensor.Float32, 0, 4))
	y, err := dev.unaryFwd("relu", empty)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{0, 4}, y.Shape())

	f64 := up(t, tensor.Zeros(tensor.Float64, 2))
	_, err = dev.unaryFwd("relu", f64)
	var oe *ops.Error
	require.ErrorAs(t, err, &oe)
	require.Contains(t, err.Error(), "float32")

	c := up(t, randn(t, rng, 4))
	require.NoError(t, c.Free())
	_, err = dev.unaryFwd("exp", c)
	require.ErrorContains(t, err, "freed")
	require.Error(t, b.CopyTo(tensor.Zeros(tensor.Float32, 4)))
}

// After one conv step, the same step allocates nothing from the driver.
func TestAllocatorNoDriverAllocAfterWarmUp(t *testing.T) {
	rng := tensor.NewRNG(2)
	x, w := up(t, randn(t, rng, 4, 3, 9, 9)), up(t, randn(t, rng, 8, 3, 3, 3))
	step := func() {
		c := dev.conv2dOp(ops.Conv2DAttrs{Padding: ops.PadSame})
		y, err := c.Forward(x, w, nil)
		require.NoError(t, err)
		dx, dw, _, err := c.Backward(y, [3]bool{true, true, false})
		require.NoError(t, err)
		freeAll(y, dx, dw)
	}
	step()
	warm := dev.MemStats().DriverAllocs
	for range 3 {
		step()
	}
	require.Equal(t, warm, dev.MemStats().DriverAllocs)
}

func TestUnary(t *testing.T) {
	rng := tensor.NewRNG(3)
	params := map[string][]float64{"clip": {-0.5, 0.7}, "leaky_relu": {0.2}, "elu": {1.3}}
	for name := range unaryCodes {
		t.Run(name, func(t *testing.T) {
			x := randn(t, rng, 7, 33)
			switch name {
			case "log", "sqrt", "rsqrt":
				x = uniform(t, rng, 0.1, 3, 7, 33)
			}
			gout := randn(t, rng, 7, 33)
			p := params[name]
			want, grads := cpuOp(t, ops.UnaryOp(name, p...), []*tensor.Tensor{x}, gout, []bool{true})
			xb := up(t, x)
			y, err := dev.unaryFwd(name, xb, p...)
			require.NoError(t, err)
			defer y.Free()
			requireClose(t, want, y, tolElementwise, "forward")
			dx, err := dev.unaryBwd(name, xb, y, up(t, gout), p...)
			require.NoError(t, err)
			defer dx.Free()
			requireClose(t, grads[0], dx, tolElementwise, "backward")
		})
	}
}

func TestBinary(t *testing.T) {
	rng := tensor.NewRNG(4)
	for name := range binaryCodes {
		for _, bshape := range [][]int{{5, 3, 17}, {3, 17}, {17}} {
			t.Run(fmt.Sprint(name, bshape), func(t *testing.T) {
				a, b := randn(t, rng, 5, 3, 17), randn(t, rng, bshape...)
				if name == "pow" {
					a = uniform(t, rng, 0.2, 2, 5, 3, 17)
				}
				gout := randn(t, rng, 5, 3, 17)
				want, grads := cpuOp(t, ops.BinaryOp(name), []*tensor.Tensor{a, b}, gout, []bool{true, true})
				ab, bb := up(t, a), up(t, b)
				y, err := dev.binaryFwd(name, ab, bb)
				require.NoError(t, err)
				defer y.Free()
				requireClose(t, want, y, tolElementwise, "forward")
				da, db, err := dev.binaryBwd(name, ab, bb, y, up(t, gout), true, true)
				require.NoError(t, err)
				defer freeAll(da, db)
				requireClose(t, grads[0], da, tolElementwise, "da")
				requireClose(t, grads[1], db, tolGEMM, "db") // a sum over a's leading dims
			})
		}
	}
	_, err := dev.binaryFwd("add", up(t, randn(t, rng, 2, 3)), up(t, randn(t, rng, 2)))
	require.ErrorContains(t, err, "trailing dims")
}

func TestSoftmax(t *testing.T) {
	rng := tensor.NewRNG(5)
	for _, c := range []struct {
		shape []int
		axis  int
	}{{[]int{4, 10}, -1}, {[]int{3, 1000}, 1}, {[]int{1, 1}, 0}, {[]int{5, 7, 3}, 1}, {[]int{6, 4}, 0}, {[]int{2, 3, 1029}, -1}} {
		for _, log := range []bool{false, true} {
			t.Run(fmt.Sprint(c.shape, c.axis, log), func(t *testing.T) {
				x := randn(t, rng, c.shape...)
				x.Float32s()[0] = 80 // a large logit: the shift must keep exp finite
				gout := randn(t, rng, c.shape...)
				op, fwd, bwd := ops.SoftmaxOp(c.axis), dev.softmaxFwd, dev.softmaxBwd
				if log {
					op, fwd, bwd = ops.LogSoftmaxOp(c.axis), dev.logSoftmaxFwd, dev.logSoftmaxBwd
				}
				want, grads := cpuOp(t, op, []*tensor.Tensor{x}, gout, []bool{true})
				y, err := fwd(up(t, x), c.axis)
				require.NoError(t, err)
				defer y.Free()
				requireClose(t, want, y, tolReduce, "forward")
				dx, err := bwd(y, up(t, gout), c.axis)
				require.NoError(t, err)
				defer dx.Free()
				requireClose(t, grads[0], dx, tolReduce, "backward")
			})
		}
	}
}

func TestSoftmaxCrossEntropy(t *testing.T) {
	rng := tensor.NewRNG(6)
	for _, r := range []ops.LossReduction{ops.LossMean, ops.LossSum, ops.LossNone} {
		for _, nc := range [][2]int{{8, 10}, {3, 1001}, {1, 1}, {0, 5}} {
			n, c := nc[0], nc[1]
			t.Run(fmt.Sprint(r, n, c), func(t *testing.T) {
				z := randn(t, rng, n, c)
				labels := make([]int32, n)
				for i := range labels {
					labels[i] = int32(rng.IntN(c))
				}
				lab := tensor.MustFromSlice(labels, n)
				gshape := []int{}
				if r == ops.LossNone {
					gshape = []int{n}
				}
				gout := randn(t, rng, gshape...)
				if r == ops.LossMean && n == 0 {
					// The mean over no examples is an error of the op's
					// device-free check, which ops.Dispatch runs before this
					// device's launchers (they do not check it again).
					soft := randn(t, rng, n, c)
					for _, c := range []struct {
						op ops.Op
						in []*tensor.Tensor
					}{
						{ops.SoftmaxCrossEntropyOp(r), []*tensor.Tensor{z, lab}},
						{ops.SoftmaxCrossEntropySoftOp(r), []*tensor.Tensor{z, soft}},
					} {
						checker, ok := c.op.(ops.Checker)
						require.True(t, ok, c.op.Name())
						require.ErrorContains(t, checker.Check(c.in), "empty batch", c.op.Name())
					}
					return
				}
				want, grads := cpuOp(t, ops.SoftmaxCrossEntropyOp(r), []*tensor.Tensor{z, lab}, gout, []bool{true, false})
				o := dev.softmaxXentOp(r)
				defer o.Free()
				loss, err := o.Forward(up(t, z), lab)
				require.NoError(t, err)
				defer loss.Free()
				requireClose(t, want, loss, tolReduce, "loss")
				dz, _, err := o.Backward(up(t, gout), false)
				require.NoError(t, err)
				defer dz.Free()
				requireClose(t, grads[0], dz, tolReduce, "dlogits")

				// Soft labels: each row a distribution.
				y, err := ops.Softmax(randn(t, rng, n, c), -1)
				require.NoError(t, err)
				want, grads = cpuOp(t, ops.SoftmaxCrossEntropySoftOp(r), []*tensor.Tensor{z, y}, gout, []bool{true, true})
				so := dev.softmaxXentSoftOp(r)
				defer so.Free()
				loss2, err := so.ForwardSoft(up(t, z), up(t, y))
				require.NoError(t, err)
				defer loss2.Free()
				requireClose(t, want, loss2, tolReduce, "soft loss")
				dz2, dy2, err := so.Backward(up(t, gout), true)
				require.NoError(t, err)
				defer freeAll(dz2, dy2)
				requireClose(t, grads[0], dz2, tolReduce, "soft dlogits")
				requireClose(t, grads[1], dy2, tolReduce, "soft dlabels")
			})
		}
	}
	o := dev.softmaxXentOp(ops.LossMean)
	_, err := o.Forward(up(t, randn(t, rng, 2, 3)), tensor.MustFromSlice([]int32{0, 3}))
	require.ErrorContains(t, err, "out of range")
}

func TestSequencePool(t *testing.T) {
	rng := tensor.NewRNG(7)
	for kind := range poolCodes {
		for _, off := range [][]int{{0, 3, 3, 4, 9}, {0, 0}, {0, 1}, {0, 0, 5, 5, 12, 13}} {
			t.Run(fmt.Sprint(kind, off), func(t *testing.T) {
				total := off[len(off)-1]
				x := randn(t, rng, total, 3, 7)
				gout := randn(t, rng, len(off)-1, 3, 7)
				want, grads := cpuOp(t, ops.SequencePoolOp(kind, -1.5, off), []*tensor.Tensor{x}, gout, []bool{true})
				o := dev.sequencePoolOp(kind, -1.5, off)
				defer o.Free()
				y, err := o.Forward(up(t, x))
				require.NoError(t, err)
				defer y.Free()
				requireClose(t, want, y, tolReduce, "forward")
				dx, err := o.Backward(up(t, gout))
				require.NoError(t, err)
				defer dx.Free()
				requireClose(t, grads[0], dx, tolReduce, "backward")
			})
		}
	}
	_, err := dev.sequencePoolOp(ops.SequencePoolSum, 0, []int{0, 2}).Forward(up(t, randn(t, rng, 3, 2)))
	require.ErrorContains(t, err, "end at 2")
}

func TestGemm(t *testing.T) {
	rng := tensor.NewRNG(8)
	for _, s := range [][3]int{{1, 1, 1}, {64, 64, 16}, {65, 63, 17}, {130, 7, 300}, {3, 200, 1}, {5, 9, 0}} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			m, n, k := s[0], s[1], s[2]
			t.Run(fmt.Sprint(s, tr), func(t *testing.T) {
				ar, ac := m, k
				if tr[0] {
					ar, ac = k, m
				}
				br, bc := k, n
				if tr[1] {
					br, bc = n, k
				}
				a, b, c := randn(t, rng, ar, ac), randn(t, rng, br, bc), randn(t, rng, m, n)
				cb := up(t, c)
				require.NoError(t, dev.Gemm(tr[0], tr[1], m, n, k, 1.5, up(t, a), ac, up(t, b), bc, 0.5, cb, n))
				want := c.Clone()
				gemm.Gemm(tr[0], tr[1], m, n, k, 1.5, a.Float32s(), ac, b.Float32s(), bc, 0.5, want.Float32s(), n)
				requireClose(t, want, cb, tolGEMM, "gemm")
			})
		}
	}
}

func TestMatMul(t *testing.T) {
	rng := tensor.NewRNG(9)
	for _, c := range []struct{ a, b []int }{
		{[]int{7, 5}, []int{5, 9}}, {[]int{3, 4, 70}, []int{3, 70, 6}}, {[]int{2, 3, 8, 5}, []int{5, 4}},
		// NumPy matmul's other forms: broadcast batch dims, 1-D operands.
		{[]int{2, 1, 3, 5}, []int{3, 5, 4}}, {[]int{3, 5}, []int{2, 5, 4}}, {[]int{0, 3, 5}, []int{1, 5, 4}},
		{[]int{5}, []int{2, 5, 4}}, {[]int{2, 3, 5}, []int{5}}, {[]int{5}, []int{5}},
	} {
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			if (tr[0] && len(c.a) < 2) || (tr[1] && len(c.b) < 2) {
				continue // a transpose flag on a 1-D operand is an error
			}
			t.Run(fmt.Sprint(c.a, c.b, tr), func(t *testing.T) {
				as, bs := append([]int(nil), c.a...), append([]int(nil), c.b...)
				if tr[0] {
					as[len(as)-1], as[len(as)-2] = as[len(as)-2], as[len(as)-1]
				}
				if tr[1] {
					bs[len(bs)-1], bs[len(bs)-2] = bs[len(bs)-2], bs[len(bs)-1]
				}
				a, b := randn(t, rng, as...), randn(t, rng, bs...)
				op := ops.MatMulOp(tr[0], tr[1])
				out, err := op.Forward([]*tensor.Tensor{a, b})
				require.NoError(t, err)
				gout := randn(t, rng, out.Shape()...)
				_, grads := cpuOp(t, op, []*tensor.Tensor{a, b}, gout, []bool{true, true})
				ab, bb := up(t, a), up(t, b)
				y, err := dev.matMul(ab, bb, tr[0], tr[1])
				require.NoError(t, err)
				defer y.Free()
				requireClose(t, out, y, tolGEMM, "forward")
				da, db, err := dev.matMulGrad(ab, bb, up(t, gout), tr[0], tr[1], true, true)
				require.NoError(t, err)
				defer freeAll(da, db)
				requireClose(t, grads[0], da, tolGEMM, "da")
				requireClose(t, grads[1], db, tolGEMM, "db")
			})
		}
	}
}

func TestConv2D(t *testing.T) {
	rng := tensor.NewRNG(10)
	for _, c := range []struct {
		x, w  []int
		attrs ops.Conv2DAttrs
		bias  bool
	}{
		{[]int{2, 3, 8, 8}, []int{4, 3, 3, 3}, ops.Conv2DAttrs{Padding: ops.PadSame}, true},
		{[]int{3, 4, 9, 7}, []int{6, 2, 3, 2}, ops.Conv2DAttrs{Stride: [2]int{2, 1}, Groups: 2, Pad: [4]int{1, 0, 2, 1}}, true},
		{[]int{1, 2, 11, 10}, []int{3, 2, 3, 3}, ops.Conv2DAttrs{Dilation: [2]int{2, 3}, Padding: ops.PadValid}, false},
		{[]int{2, 3, 5, 5}, []int{3, 1, 1, 1}, ops.Conv2DAttrs{Stride: [2]int{3, 3}, Groups: 3}, true},
		{[]int{4, 16, 32, 32}, []int{16, 16, 3, 3}, ops.Conv2DAttrs{Padding: ops.PadSame}, false},
	} {
		t.Run(fmt.Sprint(c.x, c.w, c.attrs), func(t *testing.T) {
			x, w := randn(t, rng, c.x...), randn(t, rng, c.w...)
			in := []*tensor.Tensor{x, w}
			var bb *Buffer
			if c.bias {
				b := randn(t, rng, c.w[0])
				in = append(in, b)
				bb = up(t, b)
			}
			op := ops.Conv2DOp(c.attrs)
			out, err := op.Forward(in)
			require.NoError(t, err)
			gout := randn(t, rng, out.Shape()...)
			need := []bool{true, true, c.bias}
			_, grads := cpuOp(t, ops.Conv2DOp(c.attrs), in, gout, need)
			g := dev.conv2dOp(c.attrs)
			y, err := g.Forward(up(t, x), up(t, w), bb)
			require.NoError(t, err)
			defer y.Free()
			requireClose(t, out, y, tolGEMM, "forward")
			dx, dw, db, err := g.Backward(up(t, gout), [3]bool{true, true, c.bias})
			require.NoError(t, err)
			defer freeAll(dx, dw, db)
			requireClose(t, grads[0], dx, tolGEMM, "dx")
			requireClose(t, grads[1], dw, tolGEMM, "dw")
			if c.bias {
				requireClose(t, grads[2], db, tolGEMM, "db")
			}
		})
	}
}

func TestPool2D(t *testing.T) {
	rng := tensor.NewRNG(11)
	for _, a := range []ops.Pool2DAttrs{
		{Kernel: [2]int{2, 2}},
		{Kernel: [2]int{3, 3}, Stride: [2]int{1, 1}, Padding: ops.PadSame},
		{Kernel: [2]int{3, 2}, Stride: [2]int{2, 3}, Pad: [4]int{1, 2, 0, 1}},
		{Kernel: [2]int{1, 1}, Stride: [2]int{2, 2}},
	} {
		for _, isMax := range []bool{true, false} {
			t.Run(fmt.Sprint(a, isMax), func(t *testing.T) {
				x := randn(t, rng, 2, 3, 9, 8)
				op, g := ops.AvgPool2DOp(a), dev.avgPool2DOp(a)
				if isMax {
					op, g = ops.MaxPool2DOp(a), dev.maxPool2DOp(a)
				}
				defer g.Free()
				out, err := op.Forward([]*tensor.Tensor{x})
				require.NoError(t, err)
				gout := randn(t, rng, out.Shape()...)
				grads, err := op.Backward([]*tensor.Tensor{x}, out, gout, []bool{true})
				require.NoError(t, err)
				y, err := g.Forward(up(t, x))
				require.NoError(t, err)
				defer y.Free()
				requireClose(t, out, y, tolReduce, "forward")
				dx, err := g.Backward(up(t, gout))
				require.NoError(t, err)
				defer dx.Free()
				requireClose(t, grads[0], dx, tolReduce, "backward")
			})
		}
	}
}
