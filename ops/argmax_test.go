package ops

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// naiveArg scans x [a, b, c] along axis 1 with plain loops.
func naiveArg(x *tensor.Tensor, greater bool) (vals []float64, idx []int64) {
	a, b, c := x.Dim(0), x.Dim(1), x.Dim(2)
	for i := 0; i < a; i++ {
		for k := 0; k < c; k++ {
			best, at := x.At(i*b*c+k), 0
			for j := 1; j < b; j++ {
				v := x.At((i*b+j)*c + k)
				if (greater && v > best) || (!greater && v < best) {
					best, at = v, j
				}
			}
			vals, idx = append(vals, best), append(idx, int64(at))
		}
	}
	return vals, idx
}

func TestArgMaxMinMatchNaive(t *testing.T) {
	x := randn(3, 2, 5, 3)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		xd, err := x.Cast(dt)
		require.NoError(t, err)
		for _, greater := range []bool{true, false} {
			wantV, wantI := naiveArg(x, greater)
			var v, i, i2 *tensor.Tensor
			if greater {
				v, i, err = MaxWithArg(xd, 1)
				require.NoError(t, err)
				i2, err = ArgMax(xd, -2)
			} else {
				v, i, err = MinWithArg(xd, 1)
				require.NoError(t, err)
				i2, err = ArgMin(xd, -2)
			}
			require.NoError(t, err)
			require.Equal(t, tensor.Shape{2, 3}, v.Shape())
			require.Equal(t, dt, v.DType())
			require.Equal(t, wantI, i.Int64s())
			require.Equal(t, wantI, i2.Int64s())
			requireClose(t, tensor.MustFromSlice(wantV, 2, 3), v, 1e-6, 0)
		}
	}
}

func TestArgMaxFirstIndexOnTies(t *testing.T) {
	x := tensor.MustFromSlice([]float32{1, 3, 3, 2, 2, 2}, 2, 3)
	i, err := ArgMax(x, 1)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 0}, i.Int64s())
	i, err = ArgMin(x, 1)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 0}, i.Int64s())
	i, err = ArgMax(x, 0)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 0, 0}, i.Int64s())
}

func TestArgMaxErrors(t *testing.T) {
	_, err := ArgMax(tensor.Zeros(tensor.Float32, 2, 3), 2)
	require.ErrorContains(t, err, "argmax: inputs float32[2 3]: axis 2 out of range")
	_, err = ArgMin(tensor.Zeros(tensor.Float32, 2, 0), 1)
	require.ErrorContains(t, err, "argmin: inputs float32[2 0]: axis 1 is empty")
	_, _, err = MaxWithArg(tensor.Zeros(tensor.Int32, 2), 0)
	require.ErrorContains(t, err, "max_with_arg: inputs int32[2]")
	_, _, err = MinWithArg(nil, 0)
	require.ErrorContains(t, err, "min_with_arg")
	// An empty outer axis is fine: nothing to scan.
	i, err := ArgMax(tensor.Zeros(tensor.Float64, 0, 3), 1)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{0}, i.Shape())
}
