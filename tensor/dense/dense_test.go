package dense

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gt "gorgonia.org/tensor"

	"github.com/plumbml/plumb/tensor"
)

func TestFromTensorSharesStorage(t *testing.T) {
	tests := []struct {
		name string
		x    *tensor.Tensor
	}{
		{name: "float32 matrix", x: tensor.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)},
		{name: "float64 rank 4", x: tensor.MustFromSlice(iota64(24), 1, 2, 3, 4)},
		{name: "int32 vector", x: tensor.MustFromSlice([]int32{7, 8, 9})},
		{name: "int64 matrix", x: tensor.MustFromSlice([]int64{1, 2, 3, 4}, 2, 2)},
		{name: "scalar", x: tensor.Scalar[float32](3)},
		{name: "row view", x: func() *tensor.Tensor {
			r, err := tensor.MustFromSlice(iota64(6), 3, 2).Row(1)
			require.NoError(t, err)
			return r
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := FromTensor(tc.x)
			require.NoError(t, err)
			assert.Equal(t, []int(tc.x.Shape()), []int(d.Shape()))

			// Plumb -> Gorgonia: a write to the tensor shows in the Dense.
			tc.x.SetAt(0, 42)
			assert.EqualValues(t, 42, denseAt(t, d, 0))

			back, err := ToTensor(d)
			require.NoError(t, err)
			assert.Equal(t, tc.x.DType(), back.DType())
			assert.Equal(t, tc.x.Shape(), back.Shape())
			// Gorgonia -> Plumb: a write through the round trip shows in both.
			back.SetAt(back.Size()-1, -7)
			assert.Equal(t, -7.0, tc.x.At(tc.x.Size()-1))
			assert.EqualValues(t, -7, denseAt(t, d, back.Size()-1))
		})
	}
}

// denseAt reads flat element i of a Dense, scalar or not.
func denseAt(t *testing.T, d *gt.Dense, i int) any {
	t.Helper()
	if d.IsScalar() {
		return d.ScalarValue()
	}
	v, err := d.At(unravel(d.Shape(), i)...)
	require.NoError(t, err)
	return v
}

func unravel(shape []int, i int) []int {
	idx := make([]int, len(shape))
	for a := len(shape) - 1; a >= 0; a-- {
		idx[a] = i % shape[a]
		i /= shape[a]
	}
	return idx
}

func TestToTensorSharesGorgoniaStorage(t *testing.T) {
	backing := []float32{1, 2, 3, 4, 5, 6}
	d := gt.New(gt.WithShape(2, 3), gt.WithBacking(backing))
	x, err := ToTensor(d)
	require.NoError(t, err)
	assert.Equal(t, tensor.Shape{2, 3}, x.Shape())
	backing[4] = 50
	assert.Equal(t, 50.0, x.At(4))
	require.NoError(t, d.SetAt(float32(9), 0, 0))
	assert.Equal(t, 9.0, x.At(0))
	x.SetAt(5, 60)
	v, err := d.At(1, 2)
	require.NoError(t, err)
	assert.Equal(t, float32(60), v)

	s, err := ToTensor(gt.New(gt.FromScalar(int64(5))))
	require.NoError(t, err)
	assert.Equal(t, tensor.Int64, s.DType())
	assert.Equal(t, 0, s.Rank())
	assert.Equal(t, 5.0, s.At(0))
}

func TestToTensorMaterializesViews(t *testing.T) {
	t.Run("transposed", func(t *testing.T) {
		backing := []float64{0, 1, 2, 3, 4, 5}
		d := gt.New(gt.WithShape(2, 3), gt.WithBacking(backing))
		require.NoError(t, d.T())
		x, err := ToTensor(d)
		require.NoError(t, err)
		assert.Equal(t, tensor.Shape{3, 2}, x.Shape())
		assert.Equal(t, []float64{0, 3, 1, 4, 2, 5}, x.Float64s())
		x.SetAt(0, 100)
		assert.Equal(t, 0.0, backing[0], "a materialised view is a copy")
	})
	t.Run("row slice", func(t *testing.T) {
		d := gt.New(gt.WithShape(3, 2), gt.WithBacking([]int32{0, 1, 2, 3, 4, 5}))
		v, err := d.Slice(gt.S(1, 3))
		require.NoError(t, err)
		x, err := ToTensor(v.(*gt.Dense))
		require.NoError(t, err)
		assert.Equal(t, tensor.Shape{2, 2}, x.Shape())
		assert.Equal(t, []int32{2, 3, 4, 5}, x.Int32s())
	})
	t.Run("column slice", func(t *testing.T) {
		d := gt.New(gt.WithShape(3, 2), gt.WithBacking([]float32{0, 1, 2, 3, 4, 5}))
		v, err := d.Slice(nil, gt.S(1))
		require.NoError(t, err)
		x, err := ToTensor(v.(*gt.Dense))
		require.NoError(t, err)
		assert.Equal(t, tensor.Shape{3}, x.Shape())
		assert.Equal(t, []float32{1, 3, 5}, x.Float32s())
	})
}

func TestErrors(t *testing.T) {
	for _, shape := range [][]int{{0}, {0, 8}, {3, 0, 2}} {
		_, err := FromTensor(tensor.Zeros(tensor.Float32, shape...))
		assert.ErrorContains(t, err, "zero-size", "shape %v", shape)
	}
	_, err := ToTensor(gt.New(gt.WithShape(2), gt.WithBacking([]uint8{1, 2})))
	assert.ErrorContains(t, err, "unsupported backing")
	_, err = ToTensor(gt.New(gt.FromScalar(true)))
	assert.ErrorContains(t, err, "unsupported backing")
}

func TestRejectsNilAndMasked(t *testing.T) {
	_, err := FromTensor(nil)
	require.ErrorContains(t, err, "nil tensor")
	_, err = ToTensor(nil)
	require.ErrorContains(t, err, "nil Dense")
	d := gt.New(gt.WithShape(2), gt.WithBacking([]float32{1, 2}), gt.WithMask([]bool{false, true}))
	_, err = ToTensor(d)
	require.ErrorContains(t, err, "masked")
}

func iota64(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i)
	}
	return s
}
