package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// linearXentInputs are 5 rows of 3 features over 4 classes; row 2 is
// ignored (label -1).
func linearXentInputs(seed uint64) []*tensor.Tensor {
	return ins(randn(seed, 5, 3), randn(seed+1, 3, 4), randn(seed+2, 4), tensor.MustFromSlice([]int64{3, 0, -1, 2, 1}, 5))
}

var _ = addGradCases("linear_softmax_cross_entropy",
	gradCase{name: "chunk2_ignored", attrs: Attrs{ChunkRows: 2}, in: linearXentInputs(1), wrt: []int{0, 1, 2}},
	gradCase{name: "one_chunk_int32",
		in: ins(randn(4, 3, 2), randn(5, 2, 6), randn(6, 6), tensor.MustFromSlice([]int32{5, 0, 2}, 3)), wrt: []int{0, 1, 2}},
)

// The fused op equals the linear layer, then the softmax cross-entropy
// of the kept rows averaged, in value and gradients, whatever the chunk.
func TestLinearXentMatchesComposition(t *testing.T) {
	in := linearXentInputs(7)
	logits, err := Linear(in[0], in[1], in[2])
	require.NoError(t, err)
	kept, err := Gather(logits, tensor.MustFromSlice([]int64{0, 1, 3, 4}, 4), 0)
	require.NoError(t, err)
	want, err := SoftmaxCrossEntropy(kept, tensor.MustFromSlice([]int64{3, 0, 2, 1}, 4), LossMean)
	require.NoError(t, err)
	var first []*tensor.Tensor
	for _, chunk := range []int{1, 2, 3, 5, 0} {
		op := LinearSoftmaxCrossEntropyOp(chunk)
		got, err := op.Forward(in)
		require.NoError(t, err)
		require.InDelta(t, want.At(0), got.At(0), 1e-12, "chunk %d", chunk)
		grads, err := op.Backward(in, got, tensor.Scalar(2.0), []bool{true, true, true, false})
		require.NoError(t, err)
		require.Nil(t, grads[3])
		for r := range 3 {
			require.Zero(t, grads[0].At(2*3+r), "the ignored row gets no gradient")
		}
		if first == nil {
			first = grads
			continue
		}
		for i := range 3 {
			requireClose(t, first[i], grads[i], 1e-12, 1e-12)
		}
	}
	checkDTypes(t, func() Op { return LinearSoftmaxCrossEntropyOp(2) }, in...)
}

func TestLinearXentAllIgnored(t *testing.T) {
	in := linearXentInputs(3)
	in[3] = tensor.MustFromSlice([]int64{-1, -1, -1, -1, -1}, 5)
	op := LinearSoftmaxCrossEntropyOp(0)
	got, err := op.Forward(in)
	require.NoError(t, err)
	require.Zero(t, got.At(0))
	grads, err := op.Backward(in, got, tensor.Scalar(1.0), []bool{true, true, true, false})
	require.NoError(t, err)
	require.Zero(t, grads[1].At(0))
}

func TestLinearXentErrors(t *testing.T) {
	in := linearXentInputs(1)
	_, err := LinearSoftmaxCrossEntropy(in[0], in[1], in[2], tensor.MustFromSlice([]int64{4, 0, 0, 0, 0}, 5))
	require.ErrorContains(t, err, "linear_softmax_cross_entropy: inputs float64[5 3], float64[3 4], float64[4], int64[5]: label 4 at row 0 out of range [0, 4)")
	_, err = LinearSoftmaxCrossEntropy(in[0], randn(1, 2, 4), in[2], in[3])
	require.ErrorContains(t, err, "want x [N, D], W [D, V] and b [V] with V >= 1")
	_, err = LinearSoftmaxCrossEntropy(in[0], in[1], in[2], tensor.MustFromSlice([]int64{0, 1}, 2))
	require.ErrorContains(t, err, "want int32 or int64 labels [5]")
	_, err = LinearSoftmaxCrossEntropy(in[0], f32(in[1]), in[2], in[3])
	require.ErrorContains(t, err, "want float32 or float64 inputs of one dtype")
	_, err = LinearSoftmaxCrossEntropy(in[0], in[1], in[2], nil)
	require.ErrorContains(t, err, "nil input")
}

// The eager op takes the plain op's gradients in Forward: the same value
// and gradients for any chunk, upstream gradient and set of wanted
// inputs; a Backward that asks for more than Forward took, or a second
// Backward, recomputes them.
func TestLinearXentEagerMatchesPlain(t *testing.T) {
	in := linearXentInputs(11)
	all := []bool{true, true, true, false}
	plain := LinearSoftmaxCrossEntropyOp(0)
	wantOut, err := plain.Forward(in)
	require.NoError(t, err)
	cases := []struct {
		name  string
		chunk int
		want  [3]bool
		need  []bool
		gout  float64
	}{
		{"all_one_chunk", 0, [3]bool{true, true, true}, all, 1},
		{"all_chunk2_scaled", 2, [3]bool{true, true, true}, all, -0.75},
		{"weights_only_chunk1", 1, [3]bool{false, true, true}, []bool{false, true, true, false}, 3},
		{"x_only_chunk3", 3, [3]bool{true, false, false}, []bool{true, false, false, false}, 0.5},
		{"need_more_than_taken", 2, [3]bool{false, true, false}, all, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := plain.Backward(in, wantOut, tensor.Scalar(c.gout), c.need)
			require.NoError(t, err)
			op := LinearSoftmaxCrossEntropyEagerOp(c.chunk, c.want)
			out, err := op.Forward(in)
			require.NoError(t, err)
			require.InDelta(t, wantOut.At(0), out.At(0), 1e-12)
			eager := op.(*linearXentOp)
			require.Len(t, eager.unit, 3, "Forward took gradients")
			for i, w := range c.want {
				require.Equal(t, w, eager.unit[i] != nil, "Forward took the gradient of input %d", i)
			}
			taken := eager.covers(c.need)
			for round := range 2 {
				got, err := op.Backward(in, out, tensor.Scalar(c.gout), c.need)
				require.NoError(t, err)
				for i := range 4 {
					if want[i] == nil {
						require.Nil(t, got[i], "round %d input %d", round, i)
						continue
					}
					requireClose(t, want[i], got[i], 1e-12, 1e-12)
				}
				if round == 0 && taken {
					require.Nil(t, eager.unit, "the first Backward hands the gradients over")
				}
			}
		})
	}
	checkDTypes(t, func() Op { return LinearSoftmaxCrossEntropyEagerOp(2, [3]bool{true, true, true}) }, in...)
}

// With every row ignored the eager op takes nothing and returns zero
// gradients, as the plain op does.
func TestLinearXentEagerAllIgnored(t *testing.T) {
	in := linearXentInputs(3)
	in[3] = tensor.MustFromSlice([]int64{-1, -1, -1, -1, -1}, 5)
	op := LinearSoftmaxCrossEntropyEagerOp(0, [3]bool{true, true, true})
	got, err := op.Forward(in)
	require.NoError(t, err)
	require.Zero(t, got.At(0))
	grads, err := op.Backward(in, got, tensor.Scalar(1.0), []bool{true, true, true, false})
	require.NoError(t, err)
	for i := range 3 {
		for j := range grads[i].Size() {
			require.Zero(t, grads[i].At(j))
		}
	}
}
