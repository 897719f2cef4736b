package tensor

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// iota64 returns 0, 1, ..., n-1 as float64, a fill whose every element is
// distinct so that a misplaced element shows.
func iota64(n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = float64(i)
	}
	return s
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		dt      DType
		shape   []int
		size    int
		wantErr string
	}{
		{name: "matrix float32", dt: Float32, shape: []int{2, 3}, size: 6},
		{name: "rank 4 int64", dt: Int64, shape: []int{2, 1, 3, 2}, size: 12},
		{name: "scalar", dt: Float64, shape: nil, size: 1},
		{name: "zero size", dt: Int32, shape: []int{0, 8}, size: 0},
		{name: "negative dim", dt: Float32, shape: []int{2, -1}, wantErr: "negative dim"},
		{name: "invalid dtype", dt: DType(0), shape: []int{2}, wantErr: "invalid dtype"},
		{name: "overflowing dims", dt: Float32, shape: []int{1 << 32, 1 << 32}, wantErr: "more elements than an int"},
		{name: "huge dims with a zero", dt: Float32, shape: []int{1 << 40, 1 << 40, 0}, size: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := New(tc.dt, tc.shape...)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.dt, x.DType())
			assert.Equal(t, len(tc.shape), x.Rank())
			assert.Equal(t, tc.size, x.Size())
			for i := range x.Size() {
				assert.Zero(t, x.At(i))
			}
		})
	}
}

func TestNewCopiesShape(t *testing.T) {
	shape := []int{2, 3}
	x, err := New(Float32, shape...)
	require.NoError(t, err)
	shape[0] = 7
	assert.Equal(t, Shape{2, 3}, x.Shape())
}

func TestFullAndOnes(t *testing.T) {
	for _, dt := range []DType{Float32, Float64, Int32, Int64} {
		t.Run(dt.String(), func(t *testing.T) {
			x, err := Full(dt, 2.5, 2, 2)
			require.NoError(t, err)
			want := 2.5
			if !dt.IsFloat() {
				want = 2 // ints truncate
			}
			for i := range x.Size() {
				assert.Equal(t, want, x.At(i))
			}
			o, err := Ones(dt, 3)
			require.NoError(t, err)
			for i := range o.Size() {
				assert.Equal(t, 1.0, o.At(i))
			}
		})
	}
	_, err := Full(Float32, 1, -2)
	require.ErrorContains(t, err, "negative dim")
	_, err = Ones(Float32, 3, -1)
	require.ErrorContains(t, err, "negative dim")
}

func TestFromSlice(t *testing.T) {
	tests := []struct {
		name    string
		n       int
		shape   []int
		want    Shape
		wantErr string
	}{
		{name: "no shape is 1-D", n: 5, want: Shape{5}},
		{name: "matrix", n: 6, shape: []int{2, 3}, want: Shape{2, 3}},
		{name: "empty shape list is 1-D too", n: 1, shape: []int{}, want: Shape{1}},
		{name: "empty", n: 0, shape: []int{0, 3}, want: Shape{0, 3}},
		{name: "too few", n: 5, shape: []int{2, 3}, wantErr: "5 elements do not fill shape [2 3] (6)"},
		{name: "too many", n: 7, shape: []int{2, 3}, wantErr: "7 elements do not fill"},
		{name: "negative dim", n: 6, shape: []int{-2, -3}, wantErr: "negative dim"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := FromSlice(make([]float32, tc.n), tc.shape...)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, x.Shape())
		})
	}
}

func TestFromSliceSharesStorage(t *testing.T) {
	s := []int64{1, 2, 3, 4}
	x, err := FromSlice(s, 2, 2)
	require.NoError(t, err)
	assert.Equal(t, Int64, x.DType())
	s[3] = 40
	assert.Equal(t, 40.0, x.At(3))
	x.SetAt(0, 10)
	assert.Equal(t, int64(10), s[0])
}

func TestMustFromSlicePanicsOnMismatch(t *testing.T) {
	assert.Panics(t, func() { MustFromSlice([]float32{1, 2, 3}, 2, 2) })
	assert.NotPanics(t, func() { MustFromSlice([]float32{1, 2, 3, 4}, 2, 2) })
}

func TestScalar(t *testing.T) {
	x := Scalar(int32(7))
	assert.Equal(t, Int32, x.DType())
	assert.Equal(t, 0, x.Rank())
	assert.Equal(t, 1, x.Size())
	v, err := x.Item()
	require.NoError(t, err)
	assert.Equal(t, 7.0, v)

	_, err = MustFromSlice([]float32{1, 2}).Item()
	require.ErrorContains(t, err, "want exactly one element")
	v, err = MustFromSlice([]float64{4}, 1, 1).Item()
	require.NoError(t, err)
	assert.Equal(t, 4.0, v)
}

func TestDTypes(t *testing.T) {
	tests := []struct {
		dt      DType
		name    string
		size    int
		isFloat bool
	}{
		{Float32, "float32", 4, true},
		{Float64, "float64", 8, true},
		{Int32, "int32", 4, false},
		{Int64, "int64", 8, false},
		{DType(9), "dtype(9)", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.name, tc.dt.String())
			assert.Equal(t, tc.size, tc.dt.Size())
			assert.Equal(t, tc.isFloat, tc.dt.IsFloat())
		})
	}
	assert.Equal(t, Float32, DTypeOf[float32]())
	assert.Equal(t, Float64, DTypeOf[float64]())
	assert.Equal(t, Int32, DTypeOf[int32]())
	assert.Equal(t, Int64, DTypeOf[int64]())
}

func TestAccessors(t *testing.T) {
	x := MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 1, 2, 3)
	assert.Equal(t, 3, x.Rank())
	assert.Equal(t, 6, x.Size())
	assert.Equal(t, 3, x.Dim(2))
	assert.Equal(t, 3, x.Dim(-1))
	assert.Equal(t, 1, x.Dim(-3))
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, x.Float32s())
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, Data[float32](x))
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, x.Raw())

	// Data of the wrong type is a programming error and panics by contract.
	assert.Panics(t, func() { Data[float64](x) })
	assert.Panics(t, func() { x.Int64s() })

	assert.Equal(t, []float64{1}, MustFromSlice([]float64{1}).Float64s())
	assert.Equal(t, []int32{1}, MustFromSlice([]int32{1}).Int32s())
	assert.Equal(t, []int64{1}, MustFromSlice([]int64{1}).Int64s())
}

func TestAtSetAtFill(t *testing.T) {
	for _, dt := range []DType{Float32, Float64, Int32, Int64} {
		t.Run(dt.String(), func(t *testing.T) {
			x := Zeros(dt, 2, 2)
			x.SetAt(1, 3.75)
			want := 3.75
			if !dt.IsFloat() {
				want = 3
			}
			assert.Equal(t, want, x.At(1))
			x.Fill(-2)
			for i := range x.Size() {
				assert.Equal(t, -2.0, x.At(i))
			}
		})
	}
}

func TestZerosAndZerosLike(t *testing.T) {
	assert.Panics(t, func() { Zeros(Float32, -1) })
	x := MustFromSlice([]int32{1, 2, 3}, 3, 1)
	z := ZerosLike(x)
	assert.Equal(t, Int32, z.DType())
	assert.Equal(t, Shape{3, 1}, z.Shape())
	assert.Equal(t, []int32{0, 0, 0}, z.Int32s())
}

func TestInts(t *testing.T) {
	got, err := MustFromSlice([]int32{3, -1, 0}).Ints()
	require.NoError(t, err)
	assert.Equal(t, []int{3, -1, 0}, got)
	got, err = MustFromSlice([]int64{9, 8}).Ints()
	require.NoError(t, err)
	assert.Equal(t, []int{9, 8}, got)
	_, err = MustFromSlice([]float32{1}).Ints()
	require.ErrorContains(t, err, "want an int32 or int64 tensor, got float32")
}

func TestClone(t *testing.T) {
	x := MustFromSlice([]float64{1, 2, 3, 4}, 2, 2)
	c := x.Clone()
	assert.Equal(t, x.Shape(), c.Shape())
	assert.Equal(t, x.Float64s(), c.Float64s())
	c.SetAt(0, 100)
	assert.Equal(t, 1.0, x.At(0), "clone must not share storage")
	assert.True(t, SameShape(x, c))
}

func TestCopyFrom(t *testing.T) {
	tests := []struct {
		name    string
		dst     *Tensor
		src     *Tensor
		wantErr bool
	}{
		{name: "same shape", dst: Zeros(Float32, 2, 2), src: MustFromSlice([]float32{1, 2, 3, 4}, 2, 2)},
		{name: "same size other shape", dst: Zeros(Float32, 4), src: MustFromSlice([]float32{1, 2, 3, 4}, 2, 2)},
		{name: "dtype mismatch", dst: Zeros(Float64, 4), src: MustFromSlice([]float32{1, 2, 3, 4}), wantErr: true},
		{name: "size mismatch", dst: Zeros(Float32, 3), src: MustFromSlice([]float32{1, 2, 3, 4}), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.dst.CopyFrom(tc.src)
			if tc.wantErr {
				require.ErrorContains(t, err, "CopyFrom")
				return
			}
			require.NoError(t, err)
			for i := range tc.src.Size() {
				assert.Equal(t, tc.src.At(i), tc.dst.At(i))
			}
			tc.src.SetAt(0, 9)
			assert.NotEqual(t, 9.0, tc.dst.At(0), "CopyFrom copies, it does not alias")
		})
	}
}

func TestCast(t *testing.T) {
	x := MustFromSlice([]float64{1.5, -2.7, 3, 1e3}, 2, 2)
	tests := []struct {
		to   DType
		want []float64
	}{
		{Float32, []float64{1.5, float64(float32(-2.7)), 3, 1e3}},
		{Int32, []float64{1, -2, 3, 1000}}, // truncation toward zero, as Go converts
		{Int64, []float64{1, -2, 3, 1000}},
	}
	for _, tc := range tests {
		t.Run(tc.to.String(), func(t *testing.T) {
			c, err := x.Cast(tc.to)
			require.NoError(t, err)
			assert.Equal(t, tc.to, c.DType())
			assert.Equal(t, Shape{2, 2}, c.Shape())
			for i, w := range tc.want {
				assert.Equal(t, w, c.At(i))
			}
		})
	}
	same, err := x.Cast(Float64)
	require.NoError(t, err)
	assert.Same(t, x, same)
	_, err = x.Cast(DType(0))
	require.ErrorContains(t, err, "invalid dtype")
}

func TestShape(t *testing.T) {
	assert.Equal(t, 1, Shape{}.Size())
	assert.Equal(t, 0, Shape{3, 0, 2}.Size())
	assert.Equal(t, 24, Shape{2, 3, 4}.Size())
	assert.Equal(t, []int{12, 4, 1}, Shape{2, 3, 4}.Strides())
	assert.Equal(t, []int{}, Shape{}.Strides())
	assert.True(t, Shape{2, 3}.Equal(Shape{2, 3}))
	assert.False(t, Shape{2, 3}.Equal(Shape{3, 2}))
	assert.False(t, Shape{2, 3}.Equal(Shape{2, 3, 1}))
	assert.Equal(t, "[2 3]", Shape{2, 3}.String())
	assert.Equal(t, "[]", Shape{}.String())
	s := Shape{1, 2}
	c := s.Clone()
	c[0] = 5
	assert.Equal(t, 1, s[0])
}

func TestAxis(t *testing.T) {
	tests := []struct {
		axis, rank, want int
		wantErr          bool
	}{
		{0, 3, 0, false},
		{2, 3, 2, false},
		{-1, 3, 2, false},
		{-3, 3, 0, false},
		{3, 3, 0, true},
		{-4, 3, 0, true},
		{0, 0, 0, true},
	}
	for _, tc := range tests {
		got, err := Axis(tc.axis, tc.rank)
		if tc.wantErr {
			assert.Error(t, err, "axis %d rank %d", tc.axis, tc.rank)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
}

func TestSetAtNaNKeepsNaN(t *testing.T) {
	x := Zeros(Float32, 1)
	x.SetAt(0, math.NaN())
	assert.True(t, math.IsNaN(x.At(0)))
}

func TestNilTensorsInCheckedCalls(t *testing.T) {
	x := Zeros(Float32, 2)
	require.ErrorContains(t, x.CopyFrom(nil), "nil tensor")
	require.False(t, SameShape(x, nil))
	require.False(t, SameShape(nil, nil))
}
