package tensor

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every size maps to the smallest class that holds it, classes grow with
// the size, stay within 25% of it above 8 elements, and floorClass finds
// the class a buffer of exactly a class's size serves.
func TestSizeClass(t *testing.T) {
	prevClass, prevSize := 0, 0
	for n := 1; n <= 1<<14; n++ {
		class, size, ok := sizeClass(n)
		require.True(t, ok)
		require.GreaterOrEqual(t, size, n, "n=%d", n)
		if n > 8 {
			require.Less(t, 4*size, 5*n, "n=%d size=%d", n, size) // size < 1.25n
		}
		if class != prevClass {
			require.Equal(t, prevClass+1, class, "n=%d", n)
			require.Equal(t, prevSize+1, n, "a new class starts just above the last size: n=%d", n)
		}
		fc, ok := floorClass(size)
		require.True(t, ok)
		require.Equal(t, class, fc, "n=%d size=%d", n, size)
		prevClass, prevSize = class, size
	}
	_, _, ok := sizeClass(1<<maxClassBits + 1)
	require.False(t, ok, "sizes above the largest class are not pooled")
	_, ok = floorClass(0)
	require.False(t, ok)
}

func TestSizeClassTable(t *testing.T) {
	tests := []struct{ n, size int }{
		{1, 1}, {3, 3}, {8, 8}, {9, 10}, {17, 20}, {127, 128}, {129, 160}, {513, 640}, {784 * 128, 114688},
	}
	for _, tc := range tests {
		_, size, _ := sizeClass(tc.n)
		require.Equal(t, tc.size, size, "n=%d", tc.n)
	}
}

// A buffer of any capacity serves the largest class whose size fits in it.
func TestFloorClassOfAnyCapacity(t *testing.T) {
	sizes := map[int]int{} // class -> size
	for n := 1; n <= 1<<13; n++ {
		class, size, _ := sizeClass(n)
		sizes[class] = size
	}
	for c := 1; c <= 1<<12; c++ {
		fc, ok := floorClass(c)
		require.True(t, ok)
		require.LessOrEqual(t, sizes[fc], c, "c=%d", c)
		require.Greater(t, sizes[fc+1], c, "c=%d", c)
	}
}

// Storage given back to the pool comes out of New zeroed, of the asked
// shape and dtype, whatever size of its class asked for it.
func TestNewFromPoolIsZeroed(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, dt := range []DType{Float32, Float64, Int32, Int64} {
		for _, n := range []int{1, 3, 17, 127, 513, 70_001} { // the last clears in chunks over the cores
			var r Recycler
			old := Zeros(dt, n)
			old.Fill(7)
			r.Add(old)
			require.Equal(t, 1, r.Flush())
			for _, m := range []int{n, n + 1} { // the same class or the next
				x := Zeros(dt, 1, m)
				require.Equal(t, Shape{1, m}, x.Shape())
				require.Equal(t, dt, x.DType())
				require.Equal(t, m, lenOf(x.Raw()))
				for i := range m {
					require.Zero(t, x.At(i), "%v n=%d m=%d i=%d", dt, n, m, i)
				}
			}
		}
	}
}

// Clone may take pooled storage; it holds the source's elements.
func TestCloneFromPool(t *testing.T) {
	var r Recycler
	old := Zeros(Float32, 17)
	old.Fill(5)
	r.Add(old)
	r.Flush()
	src := MustFromSlice(iota64(17))
	c := src.Clone()
	require.Equal(t, src.Float64s(), c.Float64s())
}

// Flush frees a group of tensors sharing storage only when none is kept
// and the group's own allocation is among them; it never pools a caller's
// slice.
func TestRecyclerFlush(t *testing.T) {
	mat := func() *Tensor { return Zeros(Float32, 4, 3) }
	tests := []struct {
		name  string
		build func(r *Recycler)
		freed int
	}{
		{"one tensor", func(r *Recycler) { r.Add(mat()) }, 1},
		{"two tensors and a kept third", func(r *Recycler) { r.Add(mat()); r.Add(mat()); r.Keep(mat()) }, 2},
		{"the same tensor twice and a view", func(r *Recycler) {
			a := mat()
			v, _ := a.Reshape(12)
			r.Add(a)
			r.Add(a)
			r.Add(v)
		}, 1},
		{"a kept tensor's view", func(r *Recycler) {
			a := mat()
			v, _ := a.Reshape(3, 4)
			r.Keep(a)
			r.Add(v)
		}, 0},
		{"a tensor whose view is kept", func(r *Recycler) {
			a := mat()
			v, _ := a.Reshape(3, 4)
			r.Add(a)
			r.Keep(v)
		}, 0},
		{"a tensor whose inner rows are kept", func(r *Recycler) {
			a := mat()
			row, _ := a.SliceRows(1, 2)
			r.Keep(row)
			r.Add(a)
		}, 0},
		{"a view without its allocation", func(r *Recycler) {
			row, _ := mat().SliceRows(1, 3)
			r.Add(row)
		}, 0},
		{"a caller's slice", func(r *Recycler) { r.Add(MustFromSlice(make([]float32, 12), 4, 3)) }, 0},
		{"a zero-size tensor", func(r *Recycler) { r.Add(Zeros(Float32, 0, 3)) }, 0},
		{"nil", func(r *Recycler) { r.Add(nil); r.Keep(nil) }, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r Recycler
			tc.build(&r)
			require.Equal(t, tc.freed, r.Flush())
			require.Zero(t, r.Flush(), "Flush forgets everything")
		})
	}
}

// Kept storage is never handed out again: a kept tensor keeps its values
// however many tensors of its size are made after the flush.
func TestKeptStorageSurvivesReuse(t *testing.T) {
	var r Recycler
	kept := Zeros(Float64, 3, 17)
	kept.Fill(2)
	view, _ := kept.Reshape(51)
	r.Keep(view)
	r.Add(kept)
	r.Flush()
	for range 8 {
		Zeros(Float64, 3, 17).Fill(9)
	}
	for i := range kept.Size() {
		require.Equal(t, 2.0, kept.At(i))
	}
}
