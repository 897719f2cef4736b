package embedded

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/tensor"
)

func TestLoad(t *testing.T) {
	train, test, err := Load()
	require.NoError(t, err)
	tests := []struct {
		name   string
		ds     *data.Dataset
		n      int
		counts [10]int // examples per digit, as counted in the data's provenance notes
	}{
		{name: "train", ds: train, n: 60000, counts: [10]int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}},
		{name: "test", ds: test, n: 10000, counts: [10]int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}},
	}
	for _, tc := range tests {
		ds := tc.ds
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.n, ds.Len())
			assert.Equal(t, tensor.Shape{tc.n, 1, 28, 28}, ds.Tensor("image").Shape())
			assert.Equal(t, tensor.Float32, ds.Tensor("image").DType())
			assert.Equal(t, tensor.Shape{tc.n}, ds.Tensor("label").Shape())
			assert.Equal(t, tensor.Int64, ds.Tensor("label").DType())
			var counts [10]int
			for _, l := range ds.Tensor("label").Int64s() {
				require.True(t, l >= 0 && l <= 9, "label %d", l)
				counts[l]++
			}
			assert.Equal(t, tc.counts, counts)
			lo, hi := float32(1), float32(0)
			for _, p := range ds.Tensor("image").Float32s() {
				lo, hi = min(lo, p), max(hi, p)
			}
			assert.Equal(t, float32(0), lo)
			assert.Equal(t, float32(1), hi)
		})
	}
}
