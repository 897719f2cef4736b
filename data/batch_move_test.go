package data

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// MapTensors replaces every dense tensor and ragged values, keeps the
// offsets and the index, and leaves the batch it maps unchanged.
func TestBatchMapTensors(t *testing.T) {
	ds, err := NewDataset(DenseField("x", tensor.MustFromSlice([]float32{1, 2, 3}, 3)), SeqField("w", [][]int64{{1}, {2, 3}, {}}))
	require.NoError(t, err)
	loader, err := NewLoader(ds, 3)
	require.NoError(t, err)
	var b *Batch
	for b = range loader.Batches(0) {
		break
	}
	var seen []string
	out, err := b.MapTensors(func(name string, x *tensor.Tensor) (*tensor.Tensor, error) {
		seen = append(seen, name)
		return x.Clone(), nil
	})
	require.NoError(t, err)
	require.Equal(t, []string{"x", "w"}, seen)
	require.Equal(t, b.Tensor("x").Float32s(), out.Tensor("x").Float32s())
	require.NotSame(t, b.Tensor("x"), out.Tensor("x"))
	require.Equal(t, b.Ragged("w").Offsets, out.Ragged("w").Offsets)
	require.NotSame(t, b.Ragged("w").Values, out.Ragged("w").Values)
	require.Equal(t, b.Index(), out.Index())
	require.Equal(t, 3, out.Len())

	_, err = b.MapTensors(func(name string, x *tensor.Tensor) (*tensor.Tensor, error) {
		if name == "w" {
			return nil, errors.New("no room")
		}
		return x, nil
	})
	require.ErrorContains(t, err, `field "w": no room`)
	_, err = b.MapTensors(nil)
	require.Error(t, err)
}
