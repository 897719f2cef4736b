package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

func TestAccuracy(t *testing.T) {
	logits := tensor.MustFromSlice([]float32{
		0.1, 0.7, 0.2, // argmax 1
		2, 1, 0, // argmax 0
		0, 5, 5, // tie: first index, 1
		-1, -2, -0.5, // argmax 2
	}, 4, 3)
	acc, err := Accuracy(logits, tensor.MustFromSlice([]int64{1, 2, 1, 2}, 4))
	require.NoError(t, err)
	require.Equal(t, 0.75, acc)
	acc, err = Accuracy(logits, tensor.MustFromSlice([]int32{0, 2, 2, 0}, 4))
	require.NoError(t, err)
	require.Equal(t, 0.0, acc)
	acc, err = Accuracy(tensor.Zeros(tensor.Float64, 0, 3), tensor.Zeros(tensor.Int64, 0))
	require.NoError(t, err)
	require.Equal(t, 0.0, acc)
}

func TestAccuracyErrors(t *testing.T) {
	logits := tensor.Zeros(tensor.Float32, 2, 3)
	_, err := Accuracy(logits, tensor.MustFromSlice([]int64{0, 3}, 2))
	require.ErrorContains(t, err, "accuracy: inputs float32[2 3], int64[2]: label 3 at row 1 out of range [0, 3)")
	_, err = Accuracy(logits, tensor.MustFromSlice([]int64{0, 1, 2}, 3))
	require.ErrorContains(t, err, "accuracy: inputs float32[2 3], int64[3]: want float logits [N, C] and labels [N]")
	_, err = Accuracy(logits, tensor.Zeros(tensor.Float32, 2))
	require.ErrorContains(t, err, "want int32 or int64 labels")
	_, err = Accuracy(tensor.Zeros(tensor.Float32, 6), tensor.Zeros(tensor.Int64, 6))
	require.ErrorContains(t, err, "want float logits [N, C]")
	_, err = Accuracy(nil, nil)
	require.ErrorContains(t, err, "accuracy")
}
