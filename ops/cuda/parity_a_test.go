//go:build cuda

package cuda

import (
	"testing"

	"github.com/plumbml/plumb/parity"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// parityRunsA returns the GPU runs of layer norm, the reductions, the
// embedding, the sequence ops and conv2d_transpose for TestParityGoldens,
// and false for other ops.
func parityRunsA(op string) (gpuRun, bool) {
	if _, ok := reduceCodes[op]; ok {
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			o := dev.ReduceOp(op, c.Attrs.Axes, c.Attrs.KeepDims)
			y, err := o.Forward(up(t, in[0]))
			require.NoError(t, err)
			dx, err := o.Backward(up(t, gout))
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, dx); o.Free() })
			return y, map[int]*Buffer{0: dx}, ""
		}, true
	}
	switch op {
	case "layer_norm":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			o := dev.LayerNormOp(c.Attrs.NormAxes, c.Attrs.Epsilon)
			y, err := o.Forward(up(t, in[0]), up(t, in[1]), up(t, in[2]))
			require.NoError(t, err)
			dx, dg, db, err := o.Backward(up(t, gout), [3]bool{true, true, true})
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, dx, dg, db); o.Free() })
			return y, map[int]*Buffer{0: dx, 1: dg, 2: db}, ""
		}, true
	case "embedding":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			o := dev.EmbeddingOp(c.Attrs.PaddingIdx)
			y, err := o.Forward(up(t, in[0]), in[1])
			require.NoError(t, err)
			dt, err := o.Backward(up(t, gout))
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, dt) })
			return y, map[int]*Buffer{0: dt}, ""
		}, true
	case "sequence_softmax":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			y, err := dev.SequenceSoftmax(up(t, in[0]), c.Attrs.Offsets)
			require.NoError(t, err)
			dx, err := dev.SequenceSoftmaxGrad(y, up(t, gout), c.Attrs.Offsets)
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, dx) })
			return y, map[int]*Buffer{0: dx}, ""
		}, true
	case "sequence_expand", "sequence_reverse", "sequence_slice":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			a := c.Attrs
			o := map[string]func() *SequenceRows{
				"sequence_expand":  func() *SequenceRows { return dev.SequenceExpandOp(a.Offsets) },
				"sequence_reverse": func() *SequenceRows { return dev.SequenceReverseOp(a.Offsets) },
				"sequence_slice":   func() *SequenceRows { return dev.SequenceSliceOp(a.Offsets, a.Starts, a.Lengths) },
			}[op]()
			y, err := o.Forward(up(t, in[0]))
			require.NoError(t, err)
			dx, err := o.Backward(up(t, gout))
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, dx) })
			return y, map[int]*Buffer{0: dx}, ""
		}, true
	case "sequence_concat":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			o := dev.SequenceConcatOp(c.Attrs.Offsets, c.Attrs.OffsetsB)
			y, err := o.Forward(up(t, in[0]), up(t, in[1]))
			require.NoError(t, err)
			da, db, err := o.Backward(up(t, gout), [2]bool{true, true})
			require.NoError(t, err)
			t.Cleanup(func() { freeAll(y, da, db) })
			return y, map[int]*Buffer{0: da, 1: db}, ""
		}, true
	case "conv2d_transpose":
		return func(t *testing.T, c *parity.Case, in []*tensor.Tensor, gout *tensor.Tensor) (*Buffer, map[int]*Buffer, string) {
			a, err := c.Attrs.Conv2DTranspose()
			require.NoError(t, err)
			o := dev.Conv2DTransposeOp(a)
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
	}
	return nil, false
}
