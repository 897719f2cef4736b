//go:build cuda

package cuda

import (
	"testing"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/require"
)

// Layer norm, the reductions, the embedding, the sequence ops and
// conv2d_transpose free every temporary they allocate (uploaded plans,
// offsets, geometries, partial sums): once their outputs and saved state
// are freed, the memory in use is what it was before.
func TestOpsAFreeTemporaries(t *testing.T) {
	rng := tensor.NewRNG(47)
	x, gamma, beta := up(t, randn(t, rng, 70, 9)), up(t, randn(t, rng, 9)), up(t, randn(t, rng, 9))
	img, w := up(t, randn(t, rng, 2, 4, 5, 5)), up(t, randn(t, rng, 4, 3, 3, 3))
	off := []int{0, 30, 30, 70}
	perSeq, col := up(t, randn(t, rng, 10, 3)), up(t, randn(t, rng, 630, 1))
	ids := tensor.MustFromSlice([]int64{3, 1, 3, 0, 8}, 5)
	for name, step := range map[string]func() []*Buffer{
		"layer_norm": func() []*Buffer {
			o := dev.layerNormOp(1, 1e-3)
			defer o.Free()
			y, err := o.Forward(x, gamma, beta)
			require.NoError(t, err)
			dx, dg, db, err := o.Backward(y, [3]bool{true, true, true})
			require.NoError(t, err)
			return []*Buffer{y, dx, dg, db}
		},
		"max": func() []*Buffer {
			o := dev.reduceOp("max", []int{0}, true)
			defer o.Free()
			y, err := o.Forward(x)
			require.NoError(t, err)
			dx, err := o.Backward(y)
			require.NoError(t, err)
			return []*Buffer{y, dx}
		},
		"variance": func() []*Buffer {
			o := dev.reduceOp("variance", []int{1}, false)
			defer o.Free()
			y, err := o.Forward(x)
			require.NoError(t, err)
			dx, err := o.Backward(y)
			require.NoError(t, err)
			return []*Buffer{y, dx}
		},
		"embedding": func() []*Buffer {
			o := dev.embeddingOp(0)
			y, err := o.Forward(x, ids)
			require.NoError(t, err)
			_, vals, err := o.SparseGrad(y)
			require.NoError(t, err)
			dense, err := o.Backward(y)
			require.NoError(t, err)
			return []*Buffer{y, vals, dense}
		},
		"sequence_expand": func() []*Buffer {
			o := dev.sequenceExpandOp([]int{0, 40, 40, 41, 70, 80, 80, 81, 90, 100, 130})
			y, err := o.Forward(perSeq)
			require.NoError(t, err)
			dx, err := o.Backward(y)
			require.NoError(t, err)
			return []*Buffer{y, dx}
		},
		"sequence_concat": func() []*Buffer {
			o := dev.sequenceConcatOp(off, off)
			y, err := o.Forward(x, x)
			require.NoError(t, err)
			da, db, err := o.Backward(y, [2]bool{true, true})
			require.NoError(t, err)
			return []*Buffer{y, da, db}
		},
		"sequence_softmax": func() []*Buffer {
			y, err := dev.sequenceSoftmaxFwd(col, []int{0, 300, 300, 630})
			require.NoError(t, err)
			dx, err := dev.sequenceSoftmaxBwd(y, col, []int{0, 300, 300, 630})
			require.NoError(t, err)
			return []*Buffer{y, dx}
		},
		"conv2d_transpose": func() []*Buffer {
			o := dev.conv2dTransposeOp(ops.Conv2DTransposeAttrs{Conv2DAttrs: ops.Conv2DAttrs{Stride: [2]int{2, 2}}})
			y, err := o.Forward(img, w, nil)
			require.NoError(t, err)
			dx, dw, _, err := o.Backward(y, [3]bool{true, true, false})
			require.NoError(t, err)
			return []*Buffer{y, dx, dw}
		},
	} {
		t.Run(name, func(t *testing.T) {
			before := dev.MemStats().InUse
			freeAll(step()...)
			require.Equal(t, before, dev.MemStats().InUse, "bytes in use after the step's outputs are freed")
		})
	}
}
