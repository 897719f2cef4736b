package tensor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReshape(t *testing.T) {
	tests := []struct {
		name    string
		from    []int
		to      []int
		want    Shape
		wantErr string
	}{
		{name: "flatten", from: []int{2, 3, 4}, to: []int{24}, want: Shape{24}},
		{name: "split", from: []int{24}, to: []int{2, 3, 4}, want: Shape{2, 3, 4}},
		{name: "infer first", from: []int{2, 3, 4}, to: []int{-1, 4}, want: Shape{6, 4}},
		{name: "infer middle", from: []int{2, 3, 4}, to: []int{2, -1, 2}, want: Shape{2, 6, 2}},
		{name: "infer last", from: []int{2, 3, 4}, to: []int{8, -1}, want: Shape{8, 3}},
		{name: "to scalar", from: []int{1, 1}, to: []int{}, want: Shape{}},
		{name: "from scalar", from: []int{}, to: []int{1, 1, -1}, want: Shape{1, 1, 1}},
		{name: "zero size", from: []int{0, 4}, to: []int{4, 0}, want: Shape{4, 0}},
		{name: "zero size infer", from: []int{0, 4}, to: []int{2, -1}, want: Shape{2, 0}},
		{name: "size mismatch", from: []int{2, 3}, to: []int{4, 2}, wantErr: "(6 elements) to [4 2] (8 elements)"},
		{name: "two -1", from: []int{2, 3}, to: []int{-1, -1}, wantErr: "bad dim -1"},
		{name: "negative dim", from: []int{2, 3}, to: []int{-2, -3}, wantErr: "bad dim -2"},
		{name: "cannot infer", from: []int{2, 3}, to: []int{4, -1}, wantErr: "cannot infer -1"},
		{name: "infer next to zero", from: []int{0, 4}, to: []int{0, -1}, wantErr: "cannot infer -1"},
		{name: "overflowing dims", from: []int{0}, to: []int{1 << 32, 1 << 32}, wantErr: "more elements than an int"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := Zeros(Float32, tc.from...)
			r, err := x.Reshape(tc.to...)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, r.Shape())
			assert.Equal(t, Shape(tc.from).Size(), r.Size())
		})
	}
}

func TestReshapeIsAView(t *testing.T) {
	x := MustFromSlice(iota64(6), 2, 3)
	r, err := x.Reshape(3, -1)
	require.NoError(t, err)
	r.SetAt(5, -1)
	assert.Equal(t, -1.0, x.At(5), "a write through the view shows in the source")
	x.SetAt(0, 42)
	assert.Equal(t, 42.0, r.At(0), "a write to the source shows in the view")

	to := []int{6}
	r, err = x.Reshape(to...)
	require.NoError(t, err)
	to[0] = 1
	assert.Equal(t, Shape{6}, r.Shape(), "Reshape copies the caller's dims")
}

func TestSliceRowsAndRow(t *testing.T) {
	x := MustFromSlice(iota64(12), 4, 3)
	tests := []struct {
		name     string
		from, to int
		want     []float64
		wantErr  bool
	}{
		{name: "middle", from: 1, to: 3, want: []float64{3, 4, 5, 6, 7, 8}},
		{name: "all", from: 0, to: 4, want: iota64(12)},
		{name: "empty", from: 2, to: 2, want: []float64{}},
		{name: "negative from", from: -1, to: 2, wantErr: true},
		{name: "reversed", from: 3, to: 2, wantErr: true},
		{name: "past end", from: 2, to: 5, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := x.SliceRows(tc.from, tc.to)
			if tc.wantErr {
				require.ErrorContains(t, err, "SliceRows")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, Shape{tc.to - tc.from, 3}, s.Shape())
			assert.Equal(t, tc.want, s.Float64s())
		})
	}

	s, err := x.SliceRows(1, 3)
	require.NoError(t, err)
	s.SetAt(0, -5)
	assert.Equal(t, -5.0, x.At(3), "SliceRows is a view")
	assert.Equal(t, len(s.Float64s()), cap(s.Float64s()), "a view cannot append into its source")

	r, err := x.Row(2)
	require.NoError(t, err)
	assert.Equal(t, Shape{3}, r.Shape())
	assert.Equal(t, []float64{6, 7, 8}, r.Float64s())
	r.SetAt(1, 70)
	assert.Equal(t, 70.0, x.At(7), "Row is a view")

	_, err = x.Row(4)
	require.Error(t, err)
	_, err = x.Row(-1)
	require.Error(t, err)
	_, err = Scalar[float32](1).SliceRows(0, 1)
	require.ErrorContains(t, err, "scalar")
	_, err = Scalar[float32](1).Row(0)
	require.ErrorContains(t, err, "scalar")

	v := MustFromSlice(iota64(3))
	e, err := v.Row(1)
	require.NoError(t, err)
	assert.Equal(t, 0, e.Rank(), "Row of a vector is a scalar")
	assert.Equal(t, 1.0, e.At(0))
}

// refTranspose is the plain definition: out[i0..] = in at the index whose
// axis perm[k] is i_k, written with explicit multi-indices.
func refTranspose(x *Tensor, perm []int) []float64 {
	in := x.Shape()
	out := make(Shape, len(perm))
	for k, p := range perm {
		out[k] = in[p]
	}
	res := make([]float64, out.Size())
	idx := make([]int, len(out))
	for flat := range res {
		rem := flat
		for a := len(out) - 1; a >= 0; a-- {
			idx[a] = rem % out[a]
			rem /= out[a]
		}
		src := make([]int, len(in))
		for k, p := range perm {
			src[p] = idx[k]
		}
		off := 0
		for a := range in {
			off = off*in[a] + src[a]
		}
		res[flat] = x.At(off)
	}
	return res
}

func TestTransposeMatchesIndexLoop(t *testing.T) {
	tests := []struct {
		name  string
		shape []int
		perm  []int
	}{
		{name: "matrix", shape: []int{3, 5}, perm: []int{1, 0}},
		{name: "vector", shape: []int{4}, perm: []int{0}},
		{name: "scalar", shape: []int{}, perm: []int{}},
		{name: "rank 3 rotate", shape: []int{2, 3, 4}, perm: []int{2, 0, 1}},
		{name: "rank 3 swap inner", shape: []int{2, 3, 4}, perm: []int{0, 2, 1}},
		{name: "rank 4 NCHW to NHWC", shape: []int{2, 3, 4, 5}, perm: []int{0, 2, 3, 1}},
		{name: "rank 4 NHWC to NCHW", shape: []int{2, 4, 5, 3}, perm: []int{0, 3, 1, 2}},
		{name: "rank 4 reverse", shape: []int{2, 3, 4, 5}, perm: []int{3, 2, 1, 0}},
		{name: "rank 4 pair swap", shape: []int{3, 1, 2, 4}, perm: []int{1, 0, 3, 2}},
		{name: "rank 4 identity", shape: []int{2, 3, 1, 2}, perm: []int{0, 1, 2, 3}},
		{name: "zero size", shape: []int{2, 0, 3}, perm: []int{2, 1, 0}},
	}
	rng := NewRNG(1)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, err := RandUniform(rng, Float64, -1, 1, tc.shape...)
			require.NoError(t, err)
			got, err := x.Transpose(tc.perm...)
			require.NoError(t, err)
			want := refTranspose(x, tc.perm)
			require.Equal(t, len(want), got.Size())
			assert.Equal(t, want, append([]float64{}, got.Float64s()...))
			for k, p := range tc.perm {
				assert.Equal(t, x.Dim(p), got.Dim(k))
			}
		})
	}
}

func TestTransposeDefaultReversesAndCopies(t *testing.T) {
	x := MustFromSlice([]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 2, 3, 2)
	got, err := x.Transpose()
	require.NoError(t, err)
	rev, err := x.Transpose(2, 1, 0)
	require.NoError(t, err)
	assert.Equal(t, Shape{2, 3, 2}, got.Shape())
	assert.Equal(t, rev.Int32s(), got.Int32s())
	got.SetAt(0, 99)
	assert.Equal(t, 0.0, x.At(0), "Transpose returns a copy")

	for _, dt := range []DType{Float32, Int64} {
		y, err := x.Cast(dt)
		require.NoError(t, err)
		yt, err := y.Transpose(1, 0, 2)
		require.NoError(t, err)
		xt, err := x.Transpose(1, 0, 2)
		require.NoError(t, err)
		for i := range xt.Size() {
			assert.Equal(t, xt.At(i), yt.At(i), "%v element %d", dt, i)
		}
	}
}

func TestTransposeErrors(t *testing.T) {
	x := Zeros(Float32, 2, 3, 4)
	for _, perm := range [][]int{{0, 1}, {0, 1, 2, 3}, {0, 0, 1}, {0, 1, 3}, {-1, 0, 1}} {
		_, err := x.Transpose(perm...)
		assert.Error(t, err, "perm %v", perm)
	}
}

func TestSlice(t *testing.T) {
	x := MustFromSlice(iota64(24), 2, 3, 4)
	tests := []struct {
		name     string
		axis     int
		from, to int
		want     []float64
		shape    Shape
		wantErr  bool
	}{
		{name: "axis 0", axis: 0, from: 1, to: 2, shape: Shape{1, 3, 4}, want: iota64(24)[12:]},
		{name: "axis 1", axis: 1, from: 1, to: 3, shape: Shape{2, 2, 4},
			want: []float64{4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21, 22, 23}},
		{name: "axis -1", axis: -1, from: 2, to: 4, shape: Shape{2, 3, 2},
			want: []float64{2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23}},
		{name: "empty range", axis: 2, from: 1, to: 1, shape: Shape{2, 3, 0}, want: []float64{}},
		{name: "axis out of range", axis: 3, from: 0, to: 1, wantErr: true},
		{name: "to past end", axis: 1, from: 0, to: 4, wantErr: true},
		{name: "reversed", axis: 1, from: 2, to: 1, wantErr: true},
		{name: "negative from", axis: 1, from: -1, to: 1, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := x.Slice(tc.axis, tc.from, tc.to)
			if tc.wantErr {
				require.ErrorContains(t, err, "slice")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.shape, s.Shape())
			assert.Equal(t, tc.want, s.Float64s())
		})
	}
	s, err := x.Slice(0, 0, 1)
	require.NoError(t, err)
	s.SetAt(0, -1)
	assert.Equal(t, 0.0, x.At(0), "Slice returns a copy")
}

func TestConcat(t *testing.T) {
	a := MustFromSlice([]float64{0, 1, 2, 3, 4, 5}, 2, 3)
	b := MustFromSlice([]float64{10, 11, 12}, 1, 3)
	c := MustFromSlice([]float64{20, 21, 22, 23}, 2, 2)
	empty := Zeros(Float64, 0, 3)
	tests := []struct {
		name    string
		axis    int
		ts      []*Tensor
		shape   Shape
		want    []float64
		wantErr string
	}{
		{name: "axis 0", axis: 0, ts: []*Tensor{a, b}, shape: Shape{3, 3}, want: []float64{0, 1, 2, 3, 4, 5, 10, 11, 12}},
		{name: "axis 1", axis: 1, ts: []*Tensor{a, c}, shape: Shape{2, 5}, want: []float64{0, 1, 2, 20, 21, 3, 4, 5, 22, 23}},
		{name: "axis -1", axis: -1, ts: []*Tensor{c, a, c}, shape: Shape{2, 7},
			want: []float64{20, 21, 0, 1, 2, 20, 21, 22, 23, 3, 4, 5, 22, 23}},
		{name: "with an empty part", axis: 0, ts: []*Tensor{empty, b, empty}, shape: Shape{1, 3}, want: []float64{10, 11, 12}},
		{name: "one tensor", axis: 0, ts: []*Tensor{b}, shape: Shape{1, 3}, want: []float64{10, 11, 12}},
		{name: "none", axis: 0, wantErr: "no tensors"},
		{name: "other dims differ", axis: 0, ts: []*Tensor{a, c}, wantErr: "other dims differ"},
		{name: "dtype differs", axis: 0, ts: []*Tensor{a, Zeros(Float32, 1, 3)}, wantErr: "concat"},
		{name: "rank differs", axis: 0, ts: []*Tensor{a, Zeros(Float64, 3)}, wantErr: "concat"},
		{name: "axis out of range", axis: 2, ts: []*Tensor{a, b}, wantErr: "out of range"},
		{name: "scalars", axis: 0, ts: []*Tensor{Scalar(1.0), Scalar(2.0)}, wantErr: "out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Concat(tc.axis, tc.ts...)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.shape, got.Shape())
			assert.Equal(t, tc.want, got.Float64s())
		})
	}
}

func TestConcatRank4InnerAxis(t *testing.T) {
	// Concat along axis 2 of [2,3,k,2] parts equals slicing the result back.
	rng := NewRNG(7)
	var parts []*Tensor
	for _, k := range []int{1, 3, 2} {
		p, err := RandNormal(rng, Float32, 0, 1, 2, 3, k, 2)
		require.NoError(t, err)
		parts = append(parts, p)
	}
	got, err := Concat(2, parts...)
	require.NoError(t, err)
	assert.Equal(t, Shape{2, 3, 6, 2}, got.Shape())
	at := 0
	for _, p := range parts {
		back, err := got.Slice(2, at, at+p.Dim(2))
		require.NoError(t, err)
		assert.Equal(t, p.Float32s(), back.Float32s())
		at += p.Dim(2)
	}
}

func TestStack(t *testing.T) {
	a := MustFromSlice([]int64{0, 1, 2, 3, 4, 5}, 2, 3)
	b := MustFromSlice([]int64{10, 11, 12, 13, 14, 15}, 2, 3)
	tests := []struct {
		name    string
		axis    int
		ts      []*Tensor
		shape   Shape
		want    []int64
		wantErr string
	}{
		{name: "axis 0", axis: 0, ts: []*Tensor{a, b}, shape: Shape{2, 2, 3}, want: []int64{0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}},
		{name: "axis 1", axis: 1, ts: []*Tensor{a, b}, shape: Shape{2, 2, 3}, want: []int64{0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15}},
		{name: "axis 2 (new last)", axis: 2, ts: []*Tensor{a, b}, shape: Shape{2, 3, 2}, want: []int64{0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15}},
		{name: "axis -1", axis: -1, ts: []*Tensor{a, b}, shape: Shape{2, 3, 2}, want: []int64{0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15}},
		{name: "scalars", axis: 0, ts: []*Tensor{Scalar(int64(4)), Scalar(int64(5))}, shape: Shape{2}, want: []int64{4, 5}},
		{name: "none", axis: 0, wantErr: "no tensors"},
		{name: "shapes differ", axis: 0, ts: []*Tensor{a, Zeros(Int64, 3, 2)}, wantErr: "want equal shapes"},
		{name: "dtypes differ", axis: 0, ts: []*Tensor{a, Zeros(Int32, 2, 3)}, wantErr: "concat"},
		{name: "axis out of range", axis: 3, ts: []*Tensor{a, b}, wantErr: "out of range"},
		{name: "negative axis out of range", axis: -4, ts: []*Tensor{a, b}, wantErr: "out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Stack(tc.axis, tc.ts...)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.shape, got.Shape())
			assert.Equal(t, tc.want, got.Int64s())
		})
	}
	assert.Equal(t, Shape{2, 3}, a.Shape(), "Stack leaves its inputs' shapes alone")
}
