package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// seqConvWindows are (contextStart, contextLength) pairs: centred, causal,
// all-future, a window longer than most sequences, and one that never
// overlaps its own step.
var seqConvWindows = [][2]int{{-1, 3}, {-2, 2}, {0, 2}, {-3, 7}, {2, 2}}

func addSequenceConvGradCases() bool {
	for _, w := range seqConvWindows {
		start, length := w[0], w[1]
		attrs := Attrs{Offsets: mixedOffsets, ContextStart: start, ContextLength: length}
		name := tensor.Shape{start, length}.String()
		pad := randn(3, SequenceConvPadRows(start, length), 2)
		addGradCases("sequence_conv",
			gradCase{name: "zero_pad" + name, attrs: attrs, in: ins(randn(1, 10, 2), randn(2, 2*length, 3)), wrt: []int{0, 1}},
			gradCase{name: "trainable_pad" + name, attrs: attrs, in: ins(randn(1, 10, 2), randn(2, 2*length, 3), pad), wrt: []int{0, 1, 2}},
		)
	}
	return true
}

var _ = addSequenceConvGradCases()

// plainSeqConv is sequence_conv written step by step: for each step, each
// window slot reads its own sequence's row, a padding row or zeros, and
// the output is Σ_slot Σ_k row[k]·filter[slot·D+k].
func plainSeqConv(x, filter, pad *tensor.Tensor, off []int, start, length int) *tensor.Tensor {
	d, n := x.Dim(1), filter.Dim(1)
	up := max(0, -start)
	out := tensor.Zeros(tensor.Float64, x.Dim(0), n)
	for b := 0; b+1 < len(off); b++ {
		for t := off[b]; t < off[b+1]; t++ {
			for j := 0; j < length; j++ {
				src := t + start + j
				row := make([]float64, d)
				for k := range row {
					switch {
					case src >= off[b] && src < off[b+1]:
						row[k] = x.At(src*d + k)
					case pad == nil:
					case src < off[b]:
						row[k] = pad.At((up-(off[b]-src))*d + k)
					default:
						row[k] = pad.At((up+src-off[b+1])*d + k)
					}
				}
				for o := 0; o < n; o++ {
					s := out.At(t*n + o)
					for k, v := range row {
						s += v * filter.At((j*d+k)*n+o)
					}
					out.SetAt(t*n+o, s)
				}
			}
		}
	}
	return out
}

func TestSequenceConvForward(t *testing.T) {
	x := randn(5, 10, 3)
	for _, w := range seqConvWindows {
		start, length := w[0], w[1]
		f := randn(6, 3*length, 4)
		pad := randn(7, SequenceConvPadRows(start, length), 3)
		got, err := SequenceConv(x, f, nil, mixedOffsets, start, length)
		require.NoError(t, err)
		requireClose(t, plainSeqConv(x, f, nil, mixedOffsets, start, length), got, 1e-13, 1e-12)
		got, err = SequenceConv(x, f, pad, mixedOffsets, start, length)
		require.NoError(t, err)
		requireClose(t, plainSeqConv(x, f, pad, mixedOffsets, start, length), got, 1e-13, 1e-12)
		checkDTypes(t, func() Op { return SequenceConvOp(mixedOffsets, start, length) }, x, f, pad)
	}
}

// The padding rows are Paddle's: with contextStart -2 and length 5 the
// two steps before a sequence read rows 0 and 1, the two after rows 2 and 3.
func TestSequenceConvPaddingLayout(t *testing.T) {
	x := tensor.MustFromSlice([]float64{10}, 1, 1)
	f := tensor.MustFromSlice([]float64{1, 100, 1e4, 1e6, 1e8}, 5, 1) // slot j scaled by 100^j
	pad := tensor.MustFromSlice([]float64{1, 2, 3, 4}, 4, 1)
	y, err := SequenceConv(x, f, pad, []int{0, 1}, -2, 5)
	require.NoError(t, err)
	require.Equal(t, []float64{1 + 2*100 + 10*1e4 + 3*1e6 + 4*1e8}, y.Float64s())
}

func TestSequenceConvErrors(t *testing.T) {
	x := randn(1, 4, 2)
	_, err := SequenceConv(x, randn(2, 5, 3), nil, []int{0, 4}, -1, 3)
	require.ErrorContains(t, err, "sequence_conv: inputs float64[4 2], float64[5 3]: want x [total, D] and filter [contextLength·D, out] with contextLength 3")
	_, err = SequenceConv(x, randn(2, 6, 3), randn(3, 1, 2), []int{0, 4}, -1, 3)
	require.ErrorContains(t, err, "sequence_conv: inputs float64[4 2], float64[6 3], float64[1 2]: want padding [2, 2] for context start -1 and length 3")
	_, err = SequenceConv(x, randn(2, 0, 3), nil, []int{0, 4}, 0, 0)
	require.ErrorContains(t, err, "context length 0 must be positive")
	_, err = run(SequenceConvOp([]int{0, 4}, 0, 1), x)
	require.ErrorContains(t, err, "sequence_conv: inputs float64[4 2]: want inputs x, filter and optional padding")
}

// longOffsets holds sequences long enough that most steps' windows lie
// inside their sequence (the kernels' view of x), beside empty and
// one-step ones.
var longOffsets = []int{0, 0, 1, 9, 40, 41, 77}

func addLongSequenceConvGradCases() bool {
	for _, w := range append(seqConvWindows, [2]int{0, 4}) {
		start, length := w[0], w[1]
		attrs := Attrs{Offsets: longOffsets, ContextStart: start, ContextLength: length}
		name := tensor.Shape{start, length}.String()
		addGradCases("sequence_conv",
			gradCase{name: "long" + name, attrs: attrs, in: ins(randn(11, 77, 2), randn(12, 2*length, 3), randn(13, SequenceConvPadRows(start, length), 2)), wrt: []int{0, 1, 2}},
		)
	}
	return true
}

var _ = addLongSequenceConvGradCases()

// On long sequences the kernel, which reads most windows as a view of x,
// matches the step-by-step reference, in float64 and float32, with zero
// and trainable padding.
func TestSequenceConvLongSequences(t *testing.T) {
	x := randn(21, 77, 5)
	for _, w := range append(seqConvWindows, [2]int{0, 4}, [2]int{-3, 4}) {
		start, length := w[0], w[1]
		f := randn(22, 5*length, 7)
		for _, pad := range []*tensor.Tensor{nil, randn(23, SequenceConvPadRows(start, length), 5)} {
			want := plainSeqConv(x, f, pad, longOffsets, start, length)
			got, err := SequenceConv(x, f, pad, longOffsets, start, length)
			require.NoError(t, err)
			requireClose(t, want, got, 1e-13, 1e-12)
			var pad32 *tensor.Tensor
			if pad != nil {
				pad32 = f32(pad)
			}
			got, err = SequenceConv(f32(x), f32(f), pad32, longOffsets, start, length)
			require.NoError(t, err)
			requireClose(t, want, got, 1e-5, 1e-5)
		}
	}
}
