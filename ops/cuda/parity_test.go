//go:build cuda

package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/parity"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parityDir holds the TensorFlow goldens (parity/testdata).
const parityDir = "../../parity/testdata"

// gpuRun runs one golden case's op on the device: forward on the inputs
// and backward with gout. It returns the output and the gradients of the
// case's differentiable inputs by index, or skip with the reason the GPU
// path does not cover the case.
type gpuRun func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (out *Buffer, grads map[int]*Buffer, skip string)

// TestParityGoldens runs the float32 goldens of every op the kernels cover
// through the GPU path. The goldens' own bounds are for the CPU kernels;
// the GPU is held to the tolerance of its op family (cuda_test.go) widened
// to 1e-4 relative, as float32 sums in another order than TensorFlow's.
func TestParityGoldens(t *testing.T) {
	cases, err := parity.LoadCases(os.DirFS(parityDir))
	require.NoError(t, err)
	ran := 0
	for _, c := range cases {
		run, ok := parityRuns(c.Op)
		if !ok || c.DType != "float32" || c.Kind != "op" {
			continue
		}
		t.Run(c.ID(), func(t *testing.T) {
			// The case's attributes must make the op through ops.Build, the
			// builder the parity harness and the gradient checks use; the
			// runs read the same attributes through ops.Attrs' views.
			_, err := ops.Build(c.Op, c.Attrs.Attrs)
			require.NoError(t, err)
			load := func(name string) *tensor.Tensor { return loadGolden(t, c, name) }
			in := make([]*tensor.Tensor, c.Inputs)
			for i := range in {
				in[i] = load(fmt.Sprintf("in%d", i))
			}
			var gout *tensor.Tensor
			if len(c.Grads) > 0 {
				gout = load("gout")
			}
			out, grads, skip := run(t, c, in, gout)
			if skip != "" {
				t.Skip(skip)
			}
			tl := tol{rtol: 1e-4, atol: 1e-5}
			requireClose(t, load("out"), out, tl, "out")
			for _, i := range c.Grads {
				requireClose(t, load(fmt.Sprintf("grad%d", i)), grads[i], tl, fmt.Sprintf("grad%d", i))
			}
			ran++
		})
	}
	require.NotZero(t, ran, "no golden case ran on the GPU")
	t.Logf("%d float32 golden cases ran on the GPU", ran)
}

// TestEveryCUDAKernelIsTested fails for an op whose CUDA kernel is
// registered with ops (kernels.go) but has no device test (no run in
// parityRuns, or no float32 golden for the run to check), and for an op
// that has a run but whose kernel is not registered; and for a registered
// kernel of an op that ops.Build cannot make.
func TestEveryCUDAKernelIsTested(t *testing.T) {
	require.Empty(t, registerErrs, "kernels registered under names ops does not know")
	cases, err := parity.LoadCases(os.DirFS(parityDir))
	require.NoError(t, err)
	goldens := map[string]bool{}
	for _, c := range cases {
		if c.DType == "float32" && c.Kind == "op" {
			goldens[c.Op] = true
		}
	}
	kernels := 0
	for _, s := range ops.Registered() {
		registered := ops.HasKernel(s.Name, "cuda", tensor.Float32)
		_, run := parityRuns(s.Name)
		switch {
		case registered && !run:
			t.Errorf("op %s has a registered CUDA kernel but no device test: add its run to parityRuns", s.Name)
		case run && !registered:
			t.Errorf("op %s has a CUDA run in parityRuns but its kernel is not registered: add it to ops/cuda/kernels.go", s.Name)
		case registered && !goldens[s.Name]:
			t.Errorf("op %s has a CUDA kernel but no float32 golden for its device test to run", s.Name)
		}
		if registered {
			kernels++
			_, err := ops.Build(s.Name, ops.Attrs{})
			assert.NoErrorf(t, err, "op %s has a CUDA kernel but no builder", s.Name)
		}
	}
	require.NotZero(t, kernels, "no CUDA kernel is registered")
}

// parityRuns returns the GPU run of op, and false for ops without kernels.
func parityRuns(op string) (gpuRun, bool) {
	if _, ok := unaryCodes[op]; ok {
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			p := c.Attrs.UnaryParams(op)
			x := up(t, in[0])
			y, err := dev.Unary(op, x, p...)
			require.NoError(t, err)
			t.Cleanup(func() { y.Free() })
			dx, err := dev.UnaryGrad(op, x, y, up(t, gout), p...)
			require.NoError(t, err)
			t.Cleanup(func() { dx.Free() })
			return y, map[int]*Buffer{0: dx}, ""
		}, true
	}
	if _, ok := binaryCodes[op]; ok {
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			as, bs := in[0].Shape(), in[1].Shape()
			if len(bs) > len(as) || !slices.Equal(as[len(as)-len(bs):], bs) {
				return nil, nil, fmt.Sprintf("broadcast of %v with %v is beyond the CUDA kernel's trailing-dims form", as, bs)
			}
			a, b := up(t, in[0]), up(t, in[1])
			y, err := dev.Binary(op, a, b)
			require.NoError(t, err)
			da, db, err := dev.BinaryGrad(op, a, b, y, up(t, gout), true, true)
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, da, db) })
			return y, map[int]*Buffer{0: da, 1: db}, ""
		}, true
	}
	switch op {
	case "softmax", "log_softmax":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			fwd, bwd := dev.Softmax, dev.SoftmaxGrad
			if op == "log_softmax" {
				fwd, bwd = dev.LogSoftmax, dev.LogSoftmaxGrad
			}
			y, err := fwd(up(t, in[0]), c.Attrs.Axis)
			require.NoError(t, err)
			dx, err := bwd(y, up(t, gout), c.Attrs.Axis)
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, dx) })
			return y, map[int]*Buffer{0: dx}, ""
		}, true
	case "softmax_cross_entropy", "softmax_cross_entropy_soft":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			r, err := c.Attrs.LossReduction()
			require.NoError(t, err)
			var o *SoftmaxXent
			var loss *Buffer
			if op == "softmax_cross_entropy" {
				o = dev.SoftmaxCrossEntropyOp(r)
				loss, err = o.Forward(up(t, in[0]), in[1])
			} else {
				o = dev.SoftmaxCrossEntropySoftOp(r)
				loss, err = o.ForwardSoft(up(t, in[0]), up(t, in[1]))
			}
			require.NoError(t, err)
			dz, dy, err := o.Backward(up(t, gout), true)
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(loss, dz, dy); o.Free() })
			return loss, map[int]*Buffer{0: dz, 1: dy}, ""
		}, true
	case "sequence_pool":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			o := dev.SequencePoolOp(ops.SequencePoolType(c.Attrs.Pool), c.Attrs.Pad, c.Attrs.Offsets)
			y, err := o.Forward(up(t, in[0]))
			require.NoError(t, err)
			dx, err := o.Backward(up(t, gout))
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, dx); o.Free() })
			return y, map[int]*Buffer{0: dx}, ""
		}, true
	case "matmul":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			a, b := up(t, in[0]), up(t, in[1])
			y, err := dev.MatMul(a, b, c.Attrs.TransposeA, c.Attrs.TransposeB)
			require.NoError(t, err)
			da, db, err := dev.MatMulGrad(a, b, up(t, gout), c.Attrs.TransposeA, c.Attrs.TransposeB, true, true)
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, da, db) })
			return y, map[int]*Buffer{0: da, 1: db}, ""
		}, true
	case "conv2d":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			a, err := c.Attrs.Conv2D()
			require.NoError(t, err)
			o := dev.Conv2DOp(a)
			var b *Buffer
			if len(in) == 3 {
				b = up(t, in[2])
			}
			y, err := o.Forward(up(t, in[0]), up(t, in[1]), b)
			require.NoError(t, err)
			dx, dw, db, err := o.Backward(up(t, gout), [3]bool{true, true, true})
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, dx, dw, db) })
			return y, map[int]*Buffer{0: dx, 1: dw, 2: db}, ""
		}, true
	case "batch_norm":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			o := dev.BatchNormOp(c.Attrs.BatchNorm())
			bufs := make([]*Buffer, len(in))
			for i, x := range in {
				bufs[i] = up(t, x)
			}
			y, err := o.Forward(bufs[0], bufs[1], bufs[2], bufs[3], bufs[4])
			require.NoError(t, err)
			dx, dgamma, dbeta, err := o.Backward(up(t, gout), [3]bool{true, true, true})
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, dx, dgamma, dbeta); o.Free() })
			for _, i := range c.After { // the moving statistics, updated in place
				f, err := os.Open(filepath.Join(parityDir, c.Op, c.Name, fmt.Sprintf("after%d.npy", i)))
				require.NoError(t, err)
				want, err := parity.ReadNpy(f)
				f.Close()
				require.NoError(t, err)
				requireClose(t, want, bufs[i], tol{rtol: 1e-4, atol: 1e-5}, fmt.Sprintf("after%d", i))
			}
			return y, map[int]*Buffer{0: dx, 1: dgamma, 2: dbeta}, ""
		}, true
	case "max_pool2d", "avg_pool2d":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			a, err := c.Attrs.Pool2D()
			require.NoError(t, err)
			o := dev.AvgPool2DOp(a)
			if op == "max_pool2d" {
				o = dev.MaxPool2DOp(a)
			}
			y, err := o.Forward(up(t, in[0]))
			require.NoError(t, err)
			dx, err := o.Backward(up(t, gout))
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, dx); o.Free() })
			return y, map[int]*Buffer{0: dx}, ""
		}, true
	case "lstm":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			// Inputs x, W, U, b, then peephole (5 or 7) and h0, c0 (6 or 7).
			var b [7]*Buffer
			slots := []int{LSTMGradX, LSTMGradW, LSTMGradU, LSTMGradB}
			if len(in)%2 == 1 {
				slots = append(slots, LSTMGradPeephole)
			}
			if len(in) >= 6 {
				slots = append(slots, LSTMGradH0, LSTMGradC0)
			}
			var need [7]bool
			for i, s := range slots {
				b[s], need[s] = up(t, in[i]), true
			}
			o := dev.LSTMOp(ops.LSTMAttrs{Offsets: c.Attrs.Offsets, Reverse: c.Attrs.Reverse})
			y, err := o.Forward(b[0], b[1], b[2], b[3], b[4], b[5], b[6])
			require.NoError(t, err)
			g, err := o.Backward(up(t, gout), need)
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(append(g[:], y)...); o.Free() })
			grads := map[int]*Buffer{}
			for i, s := range slots {
				grads[i] = g[s]
			}
			return y, grads, ""
		}, true
	case "gru":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			var h0 *Buffer
			if len(in) == 5 {
				h0 = up(t, in[4])
			}
			o := dev.GRUOp(ops.GRUAttrs{Offsets: c.Attrs.Offsets, Reverse: c.Attrs.Reverse, ResetAfter: c.Attrs.ResetAfter})
			y, err := o.Forward(up(t, in[0]), up(t, in[1]), up(t, in[2]), up(t, in[3]), h0)
			require.NoError(t, err)
			g, err := o.Backward(up(t, gout), [5]bool{true, true, true, true, true})
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(append(g[:], y)...); o.Free() })
			grads := map[int]*Buffer{}
			for i := range in {
				grads[i] = g[i]
			}
			return y, grads, ""
		}, true
	case "lstm_cell", "gru_cell":
		// One step of the fused ops over B one-step sequences.
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			off := make([]int, in[0].Dim(0)+1)
			for i := range off {
				off[i] = i
			}
			b := make([]*Buffer, len(in))
			for i := range in {
				b[i] = up(t, in[i])
			}
			grads := map[int]*Buffer{}
			if op == "gru_cell" { // x, h, W, U, b
				o := dev.GRUOp(ops.GRUAttrs{Offsets: off, ResetAfter: c.Attrs.ResetAfter})
				y, err := o.Forward(b[0], b[2], b[3], b[4], b[1])
				require.NoError(t, err)
				g, err := o.Backward(up(t, gout), [5]bool{true, true, true, true, true})
				require.NoError(t, err)
				t.Cleanup(func() { freeAll(append(g[:], y)...); o.Free() })
				for i, s := range []int{GRUGradX, GRUGradH0, GRUGradW, GRUGradU, GRUGradB} {
					grads[i] = g[s]
				}
				return y, grads, ""
			}
			var p *Buffer // x, h, c, W, U, b, [peephole]
			if len(in) == 7 {
				p = b[6]
			}
			o := dev.LSTMOp(ops.LSTMAttrs{Offsets: off})
			y, err := o.Forward(b[0], b[3], b[4], b[5], p, b[1], b[2])
			require.NoError(t, err)
			g, err := o.Backward(up(t, gout), [7]bool{true, true, true, true, true, true, true})
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(append(g[:], y)...); o.Free() })
			for i, s := range []int{LSTMGradX, LSTMGradH0, LSTMGradC0, LSTMGradW, LSTMGradU, LSTMGradB, LSTMGradPeephole}[:len(in)] {
				grads[i] = g[s]
			}
			return y, grads, ""
		}, true
	case "attention":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			var mask *Buffer
			if len(in) == 4 {
				mask = up(t, in[3])
			}
			o := dev.AttentionOp(c.Attrs.Attention())
			y, err := o.Forward(up(t, in[0]), up(t, in[1]), up(t, in[2]), mask)
			require.NoError(t, err)
			dq, dk, dv, err := o.Backward(up(t, gout))
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, dq, dk, dv); o.Free() })
			return y, map[int]*Buffer{0: dq, 1: dk, 2: dv}, ""
		}, true
	}
	return parityRunsA(op)
}

// loadGolden reads the array name (in0, out, gout, ...) of golden case c.
func loadGolden(t *testing.T, c *parity.Case, name string) *tensor.Tensor {
	t.Helper()
	f, err := os.Open(filepath.Join(parityDir, c.Op, c.Name, name+".npy"))
	require.NoError(t, err)
	defer f.Close()
	x, err := parity.ReadNpy(f)
	require.NoError(t, err)
	return x
}
