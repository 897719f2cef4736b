package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

var _ = addGradCases("log_softmax",
	gradCase{name: "last", attrs: Attrs{Axis: -1}, in: ins(randn(11, 3, 4)), wrt: []int{0}},
	gradCase{name: "middle", attrs: Attrs{Axis: 1}, in: ins(randn(12, 2, 3, 4)), wrt: []int{0}},
)

func plainLogSoftmax(row []float64) []float64 {
	p := plainSoftmax(row)
	for i, v := range p {
		p[i] = math.Log(v)
	}
	return p
}

func TestLogSoftmaxForward(t *testing.T) {
	x := randn(13, 3, 4, 2)
	for _, axis := range []int{0, 1, 2} {
		got, err := LogSoftmax(x, axis)
		require.NoError(t, err)
		requireClose(t, plainAlongAxis(x, axis, plainLogSoftmax), got, 1e-14, 1e-12)
		checkDTypes(t, func() Op { return LogSoftmaxOp(axis) }, x)
	}
}

func TestLogSoftmaxLargeLogitsStayFinite(t *testing.T) {
	// log_softmax([1000, 1001]) = [-log(1+e), -log(1+1/e)]; a naive
	// log(exp(x)/Σexp(x)) is NaN here, and for [0, -1000] it is -Inf.
	y, err := LogSoftmax(tensor.MustFromSlice([]float32{1000, 1001, 0, -1000}, 2, 2), -1)
	require.NoError(t, err)
	want := []float64{-math.Log1p(math.E), -math.Log1p(1 / math.E), 0, -1000}
	requireClose(t, tensor.MustFromSlice(want, 2, 2), y, 1e-6, 1e-6)
}

func TestLogSoftmaxErrors(t *testing.T) {
	_, err := LogSoftmax(tensor.Zeros(tensor.Float64, 4), 1)
	require.ErrorContains(t, err, "log_softmax: inputs float64[4]")
}
