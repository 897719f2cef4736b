package data

import (
	"errors"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data/internal/datatest"
	"github.com/plumbml/plumb/tensor"
)

// toyExamples yields n examples shaped like toyDataset's rows, counting
// how many passes were opened.
func toyExamples(n int, opened *int) func() iter.Seq2[Example, error] {
	return func() iter.Seq2[Example, error] {
		*opened++
		return func(yield func(Example, error) bool) {
			for i := range n {
				seq := make([]int64, i%4+1)
				for k := range seq {
					seq[k] = int64(i)
				}
				ex := Example{"x": tensor.MustFromSlice([]float32{float32(i), float32(-i)}, 2), "y": i, "seq": seq}
				if !yield(ex, nil) {
					return
				}
			}
		}
	}
}

func TestStreamInOrder(t *testing.T) {
	opened := 0
	s, err := NewStream(toyExamples(10, &opened), 4, Size(10))
	require.NoError(t, err)
	assert.Equal(t, 10, s.Len())
	for e := range 2 {
		sizes, ids := epochIDs(t, s, e)
		assert.Equal(t, []int{4, 4, 2}, sizes)
		assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, ids)
	}
	assert.Equal(t, 2, opened, "each epoch opens a fresh pass")

	s, err = NewStream(toyExamples(10, &opened), 4, DropLast())
	require.NoError(t, err)
	sizes, _ := epochIDs(t, s, 0)
	assert.Equal(t, []int{4, 4}, sizes)
	assert.Equal(t, 0, s.Len(), "no Size: unknown")
}

func TestStreamShuffleBuffer(t *testing.T) {
	const n = 200
	opened := 0
	s, err := NewStream(toyExamples(n, &opened), 16, Shuffle(9), ShuffleBuffer(50))
	require.NoError(t, err)
	_, ids := epochIDs(t, s, 0)
	sorted := slices.Sorted(slices.Values(ids))
	for i, id := range sorted {
		require.Equal(t, i, id, "every example exactly once")
	}
	assert.NotEqual(t, sorted, ids)
	// A buffer of 50 can only move an example ahead by less than 50 places.
	for pos, id := range ids {
		assert.Less(t, id, pos+50, "example %d came out at %d", id, pos)
	}
	_, again := epochIDs(t, s, 0)
	assert.Equal(t, ids, again, "same seed and epoch, same order")
	_, next := epochIDs(t, s, 1)
	assert.NotEqual(t, ids, next)
}

func TestStreamBucketBy(t *testing.T) {
	opened := 0
	plain, err := NewStream(toyExamples(400, &opened), 8, Shuffle(2))
	require.NoError(t, err)
	bucketed, err := NewStream(toyExamples(400, &opened), 8, Shuffle(2), BucketBy("seq", 10))
	require.NoError(t, err)
	waste := func(s *Stream) (pad int, ids []int) {
		for b, err := range s.Batches(0) {
			require.NoError(t, err)
			pad += padding(b.Ragged("seq"))
			ids = append(ids, batchIDs(t, b)...)
		}
		return pad, ids
	}
	plainPad, _ := waste(plain)
	bucketPad, ids := waste(bucketed)
	assert.Less(t, bucketPad*5, plainPad, "bucketing wastes far less padding (%d vs %d steps)", bucketPad, plainPad)
	assert.Len(t, ids, 400)

	bad, err := NewStream(toyExamples(4, &opened), 2, BucketBy("y", 1))
	require.NoError(t, err)
	for b, err := range bad.Batches(0) {
		assert.Nil(t, b)
		assert.ErrorContains(t, err, `BucketBy field "y" is a int, want a sequence`)
	}
}

func TestStreamErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	failing := func() iter.Seq2[Example, error] {
		return func(yield func(Example, error) bool) {
			if yield(Example{"y": 1}, nil) {
				yield(nil, boom)
			}
		}
	}
	s, err := NewStream(failing, 4)
	require.NoError(t, err)
	var errs []error
	for b, err := range s.Batches(0) {
		assert.Nil(t, b)
		errs = append(errs, err)
	}
	require.Len(t, errs, 1)
	assert.ErrorIs(t, errs[0], boom)

	mixed := func() iter.Seq2[Example, error] {
		return func(yield func(Example, error) bool) {
			_ = yield(Example{"y": 1}, nil) && yield(Example{"y": []int64{1}}, nil)
		}
	}
	s, err = NewStream(mixed, 2)
	require.NoError(t, err)
	for _, err := range s.Batches(0) {
		assert.ErrorContains(t, err, `field "y" of example 1 is a []int64, but example 0's is a int`)
	}

	_, err = NewStream(nil, 2)
	assert.ErrorContains(t, err, "nil open")
	_, err = NewStream(failing, 2, ShuffleBuffer(-1))
	assert.ErrorContains(t, err, "cannot be negative")
}

func TestFromExamples(t *testing.T) {
	ds, err := FromExamples([]Example{
		{"label": 1, "score": float32(0.5), "w": []int64{3, 4}, "img": tensor.MustFromSlice([]float32{1, 2}, 2), "f64": 1.5},
		{"label": int64(0), "score": float32(1.5), "w": []int64{}, "img": tensor.MustFromSlice([]float32{3, 4}, 2), "f64": 2.5},
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"f64", "img", "label", "score", "w"}, ds.Names())
	assert.Equal(t, []int64{1, 0}, ds.Tensor("label").Int64s())
	assert.Equal(t, []float32{0.5, 1.5}, ds.Tensor("score").Float32s())
	assert.Equal(t, []float64{1.5, 2.5}, ds.Tensor("f64").Float64s())
	assert.Equal(t, tensor.Shape{2, 2}, ds.Tensor("img").Shape())
	assert.Equal(t, []int{0, 2, 2}, ds.Ragged("w").Offsets)

	tests := []struct {
		name    string
		exs     []Example
		wantErr string
	}{
		{name: "none", wantErr: "no examples"},
		{name: "missing field", exs: []Example{{"a": 1, "b": 2}, {"a": 1, "c": 2}}, wantErr: `example 1 lacks field "b"`},
		{name: "extra field", exs: []Example{{"a": 1}, {"a": 1, "c": 2}}, wantErr: "example 1 has 2 fields"},
		{name: "float into int", exs: []Example{{"a": 1}, {"a": float32(1)}}, wantErr: `field "a" of example 1 is a float32`},
		{name: "int into float", exs: []Example{{"a": float32(1)}, {"a": 1}}, wantErr: `field "a" of example 1 is a int`},
		{name: "unsupported", exs: []Example{{"a": "text"}}, wantErr: `is a string: want a scalar`},
		{name: "shapes", exs: []Example{{"a": tensor.Zeros(tensor.Float32, 2)}, {"a": tensor.Zeros(tensor.Float32, 3)}}, wantErr: `field "a"`},
		{name: "dtypes", exs: []Example{{"a": tensor.Zeros(tensor.Float32, 2)}, {"a": tensor.Zeros(tensor.Int64, 2)}}, wantErr: "is int64, but example 0's is float32"},
		{name: "nil tensor", exs: []Example{{"a": (*tensor.Tensor)(nil)}}, wantErr: `field "a" of example 0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromExamples(tc.exs)
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestLineSource(t *testing.T) {
	dir := datatest.WriteFiles(t, map[string][]byte{"r.txt.gz": datatest.Gzip(t, []byte("1 3\n\n2 4 4\nbad\n"))})
	parse := func(n int, line string) (Example, error) {
		if line == "" {
			return nil, nil
		}
		var ids []int64
		for _, f := range strings.Fields(line) {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				return nil, err
			}
			ids = append(ids, v)
		}
		return Example{"ids": ids, "line": n}, nil
	}
	s, err := NewStream(LineSource(filepath.Join(dir, "r.txt.gz"), parse), 2)
	require.NoError(t, err)
	var got [][]int64
	var errs []error
	for b, err := range s.Batches(0) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		assert.Equal(t, []int64{1, 3}, b.Tensor("line").Int64s())
		got = append(got, b.Ragged("ids").Values.Int64s())
	}
	assert.Equal(t, [][]int64{{1, 3, 2, 4, 4}}, got)
	require.Len(t, errs, 1)
	assert.ErrorContains(t, errs[0], `r.txt.gz line 4: strconv.ParseInt: parsing "bad"`)

	missing, err := NewStream(LineSource(filepath.Join(dir, "none.txt"), parse), 2)
	require.NoError(t, err)
	for _, err := range missing.Batches(0) {
		assert.ErrorIs(t, err, os.ErrNotExist)
	}
	// Breaking out early closes the file and reports nothing.
	for range s.Batches(1) {
		break
	}
}
