package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var (
	xentLabels64 = tensor.MustFromSlice([]int64{2, 0, 3, 1}, 4)
	xentLabels32 = tensor.MustFromSlice([]int32{1, 1, 0}, 3)
	// Soft labels in (0, 1) whose rows do not sum to 1, so the check
	// covers the exact gradient softmax·Σy - y.
	xentSoft = randu(31, 0.05, 1, 4, 3)
)

var _ = addGradCases("softmax_cross_entropy",
	gradCase{name: "mean", attrs: Attrs{Reduction: LossMean}, in: ins(randn(21, 4, 5), xentLabels64), wrt: []int{0}},
	gradCase{name: "sum", attrs: Attrs{Reduction: LossSum}, in: ins(randn(22, 3, 2), xentLabels32), wrt: []int{0}},
	gradCase{name: "none", attrs: Attrs{Reduction: LossNone}, in: ins(randn(23, 4, 5), xentLabels64), wrt: []int{0}},
)

var _ = addGradCases("softmax_cross_entropy_soft",
	gradCase{name: "mean", attrs: Attrs{Reduction: LossMean}, in: ins(randn(24, 4, 3), xentSoft), wrt: []int{0, 1}},
	gradCase{name: "none", attrs: Attrs{Reduction: LossNone}, in: ins(randn(25, 4, 3), xentSoft), wrt: []int{0, 1}},
)

// plainXent returns -log(softmax(z_i)[label_i]) for each row.
func plainXent(z *tensor.Tensor, labels []int) []float64 {
	c := z.Dim(1)
	out := make([]float64, len(labels))
	for i, l := range labels {
		out[i] = -math.Log(plainSoftmax(z.Float64s()[i*c : (i+1)*c])[l])
	}
	return out
}

func TestSoftmaxCrossEntropyForward(t *testing.T) {
	z := randn(26, 4, 5)
	checkLossReductions(t, SoftmaxCrossEntropyOp, plainXent(z, []int{2, 0, 3, 1}), []int{4}, z, xentLabels64)
}

// The fused op against its plain composition -Σ onehot·log_softmax(z).
func TestSoftmaxCrossEntropyMatchesComposition(t *testing.T) {
	z := randn(27, 3, 4)
	labels := []int32{3, 0, 2}
	onehot := tensor.Zeros(tensor.Float64, 3, 4)
	for i, l := range labels {
		onehot.SetAt(i*4+int(l), 1)
	}
	ls, err := LogSoftmax(z, -1)
	require.NoError(t, err)
	prod, err := Mul(onehot, ls)
	require.NoError(t, err)
	want := make([]float64, 3)
	for i := range want {
		for j := range 4 {
			want[i] -= prod.At(i*4 + j)
		}
	}
	got, err := SoftmaxCrossEntropy(z, tensor.MustFromSlice(labels, 3), LossNone)
	require.NoError(t, err)
	requireClose(t, tensor.MustFromSlice(want, 3), got, 1e-14, 1e-12)
	soft, err := SoftmaxCrossEntropySoft(z, onehot, LossNone)
	require.NoError(t, err)
	requireClose(t, tensor.MustFromSlice(want, 3), soft, 1e-14, 1e-12)
}

func TestSoftmaxCrossEntropyGradIsSoftmaxMinusOneHot(t *testing.T) {
	z := randn(28, 2, 3)
	labels := tensor.MustFromSlice([]int64{1, 2}, 2)
	op := SoftmaxCrossEntropyOp(LossMean)
	y, err := op.Forward(ins(z, labels))
	require.NoError(t, err)
	g, err := op.Backward(ins(z, labels), y, tensor.Scalar(1.0), []bool{true, false})
	require.NoError(t, err)
	require.Nil(t, g[1], "integer labels have no gradient")
	want := make([]float64, 6)
	for i, l := range []int{1, 2} {
		p := plainSoftmax(z.Float64s()[i*3 : (i+1)*3])
		for j := range 3 {
			want[i*3+j] = p[j] / 2
			if j == l {
				want[i*3+j] -= 0.5
			}
		}
	}
	requireClose(t, tensor.MustFromSlice(want, 2, 3), g[0], 1e-15, 1e-12)
}

func TestSoftmaxCrossEntropyLargeLogitsStayFinite(t *testing.T) {
	z := tensor.MustFromSlice([]float32{1000, 0, -1000, 1000, 1001, 0}, 2, 3)
	got, err := SoftmaxCrossEntropy(z, tensor.MustFromSlice([]int32{2, 1}, 2), LossNone)
	require.NoError(t, err)
	requireClose(t, tensor.MustFromSlice([]float64{2000, math.Log1p(1 / math.E)}, 2), got, 1e-6, 1e-6)
}

func TestSoftmaxCrossEntropySoftForwardAndTFGradient(t *testing.T) {
	z := randn(29, 3, 4)
	y := randu(30, 0, 1, 3, 4)
	for i := range 3 { // normalise rows: TF's gradient softmax - y then holds
		s := 0.0
		for j := range 4 {
			s += y.At(i*4 + j)
		}
		for j := range 4 {
			y.SetAt(i*4+j, y.At(i*4+j)/s)
		}
	}
	op := SoftmaxCrossEntropySoftOp(LossSum)
	got, err := op.Forward(ins(z, y))
	require.NoError(t, err)
	want, wantDz, wantDy := 0.0, make([]float64, 12), make([]float64, 12)
	for i := range 3 {
		ls := plainLogSoftmax(z.Float64s()[i*4 : (i+1)*4])
		for j := range 4 {
			want -= y.At(i*4+j) * ls[j]
			wantDz[i*4+j] = math.Exp(ls[j]) - y.At(i*4+j)
			wantDy[i*4+j] = -ls[j]
		}
	}
	requireClose(t, tensor.Scalar(want), got, 1e-14, 1e-12)
	g, err := op.Backward(ins(z, y), got, tensor.Scalar(1.0), []bool{true, true})
	require.NoError(t, err)
	requireClose(t, tensor.MustFromSlice(wantDz, 3, 4), g[0], 1e-14, 1e-12)
	requireClose(t, tensor.MustFromSlice(wantDy, 3, 4), g[1], 1e-14, 1e-12)
	checkDTypes(t, func() Op { return SoftmaxCrossEntropySoftOp(LossMean) }, z, y)
}

func TestSoftmaxCrossEntropyErrors(t *testing.T) {
	z := tensor.Zeros(tensor.Float32, 2, 3)
	cases := []struct {
		name   string
		labels *tensor.Tensor
		r      LossReduction
		want   []string
	}{
		{"label too large", tensor.MustFromSlice([]int64{0, 3}, 2), LossMean,
			[]string{"softmax_cross_entropy: inputs float32[2 3], int64[2]", "label 3 at row 1 out of range [0, 3)"}},
		{"negative label", tensor.MustFromSlice([]int32{-1, 0}, 2), LossMean,
			[]string{"softmax_cross_entropy: inputs float32[2 3], int32[2]", "label -1 at row 0"}},
		{"float labels", tensor.Zeros(tensor.Float32, 2), LossMean, []string{"want int32 or int64 labels [2]"}},
		{"wrong batch", tensor.Zeros(tensor.Int64, 3), LossMean, []string{"int64[3]", "labels [2]"}},
		{"bad reduction", tensor.Zeros(tensor.Int64, 2), LossReduction(7), []string{"unknown reduction LossReduction(7)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := SoftmaxCrossEntropy(z, c.labels, c.r)
			for _, w := range c.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
	_, err := SoftmaxCrossEntropy(tensor.Zeros(tensor.Float32, 6), tensor.Zeros(tensor.Int64, 6), LossMean)
	require.ErrorContains(t, err, "logits [N, C]")
	_, err = SoftmaxCrossEntropySoft(z, tensor.Zeros(tensor.Float32, 2, 4), LossMean)
	require.ErrorContains(t, err, "softmax_cross_entropy_soft: inputs float32[2 3], float32[2 4]")
	_, err = SoftmaxCrossEntropySoft(z, tensor.Zeros(tensor.Float64, 2, 3), LossMean)
	require.ErrorContains(t, err, "logits' dtype and shape [2 3]")
	_, err = SoftmaxCrossEntropy(z, nil, LossMean)
	require.ErrorContains(t, err, "nil input")
}
