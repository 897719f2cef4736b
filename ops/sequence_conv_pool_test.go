package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

func addSequenceConvPoolMaxGradCases() bool {
	for _, w := range append(seqConvWindows, [2]int{0, 4}) {
		start, length := w[0], w[1]
		name := tensor.Shape{start, length}.String()
		for _, off := range []struct {
			name    string
			offsets []int
			total   int
		}{{"", mixedOffsets, 10}, {"long", longOffsets, 77}} {
			attrs := Attrs{Offsets: off.offsets, ContextStart: start, ContextLength: length}
			addGradCases("sequence_conv_pool_max",
				gradCase{name: off.name + "zero_pad" + name, attrs: attrs, in: ins(randn(31, off.total, 2), randn(32, 2*length, 3)), wrt: []int{0, 1}},
				gradCase{name: off.name + "trainable_pad" + name, attrs: attrs,
					in: ins(randn(31, off.total, 2), randn(32, 2*length, 3), randn(33, SequenceConvPadRows(start, length), 2)), wrt: []int{0, 1, 2}},
			)
		}
	}
	return true
}

var _ = addSequenceConvPoolMaxGradCases()

// TestSequenceConvPoolMaxEqualsConvThenPool runs the fused op against
// sequence_conv followed by max sequence_pool, forward and backward, on
// long sequences of odd widths beside empty and one-step ones, every
// window, zero and trainable padding, float64 and float32.
func TestSequenceConvPoolMaxEqualsConvThenPool(t *testing.T) {
	const d, n = 5, 19
	x := randn(41, 77, d)
	for _, w := range append(seqConvWindows, [2]int{0, 4}, [2]int{-3, 4}) {
		start, length := w[0], w[1]
		for _, trainable := range []bool{false, true} {
			for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
				in := ins(x, randn(42, d*length, n))
				if trainable {
					in = append(in, randn(43, SequenceConvPadRows(start, length), d))
				}
				for i := range in {
					var err error
					in[i], err = in[i].Cast(dt)
					require.NoError(t, err)
				}
				gy, err := randn(44, len(longOffsets)-1, n).Cast(dt)
				require.NoError(t, err)
				all := []bool{true, true, true}[:len(in)]

				conv := SequenceConvOp(longOffsets, start, length)
				pool := SequencePoolOp(SequencePoolMax, 0, longOffsets)
				y, err := conv.Forward(in)
				require.NoError(t, err)
				want, err := pool.Forward(ins(y))
				require.NoError(t, err)
				gPool, err := pool.Backward(ins(y), want, gy, []bool{true})
				require.NoError(t, err)
				wantGrads, err := conv.Backward(in, y, gPool[0], all)
				require.NoError(t, err)

				op := SequenceConvPoolMaxOp(longOffsets, start, length)
				got, err := op.Forward(in)
				require.NoError(t, err)
				tol := map[tensor.DType]float64{tensor.Float64: 1e-12, tensor.Float32: 1e-5}[dt]
				requireClose(t, want, got, tol, tol)
				grads, err := op.Backward(in, got, gy, all)
				require.NoError(t, err)
				for i := range in {
					requireClose(t, wantGrads[i], grads[i], tol, tol)
				}
			}
		}
	}
}

func TestSequenceConvPoolMaxErrors(t *testing.T) {
	x := randn(1, 4, 2)
	_, err := SequenceConvPoolMax(x, randn(2, 5, 3), nil, []int{0, 4}, -1, 3)
	require.ErrorContains(t, err, "sequence_conv_pool_max: inputs float64[4 2], float64[5 3]: want x [total, D] and filter [contextLength·D, out] with contextLength 3")
	_, err = SequenceConvPoolMax(x, randn(2, 6, 3), randn(3, 1, 2), []int{0, 4}, -1, 3)
	require.ErrorContains(t, err, "want padding [2, 2] for context start -1 and length 3")
	_, err = SequenceConvPoolMax(x, randn(2, 6, 3), nil, []int{0, 5}, -1, 3)
	require.ErrorContains(t, err, "sequence_conv_pool_max: inputs float64[4 2], float64[6 3]")
	_, err = SequenceConvPoolMaxOp([]int{0, 4}, -1, 3).Backward(ins(x, randn(2, 6, 3)), randn(3, 1, 3), randn(4, 1, 3), []bool{true, true})
	require.ErrorContains(t, err, "backward before forward")
}
