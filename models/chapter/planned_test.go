package chapter

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// SeqQueries' inputs of any run of examples are its sequences' ids and
// offsets, and RaggedInputs reads them back as that ragged batch; runs
// outside the examples are errors.
func TestSeqQueries(t *testing.T) {
	seqs := [][]int64{{1, 2, 3}, {4}, {5, 6}}
	q, err := SeqQueries([]string{"a", "b", "c"}, seqs)
	require.NoError(t, err)
	require.Equal(t, 3, q.Len())
	for _, c := range []struct {
		from, to int
		ids      []int64
		offsets  []int
	}{
		{0, 3, []int64{1, 2, 3, 4, 5, 6}, []int{0, 3, 4, 6}},
		{1, 3, []int64{4, 5, 6}, []int{0, 1, 3}},
		{2, 3, []int64{5, 6}, []int{0, 2}},
	} {
		in, err := q.Inputs(c.from, c.to)
		require.NoError(t, err)
		r, err := RaggedInputs(in)
		require.NoError(t, err)
		require.Equal(t, c.ids, r.Values.Int64s(), "[%d, %d)", c.from, c.to)
		require.Equal(t, c.offsets, r.Offsets, "[%d, %d)", c.from, c.to)
	}
	for _, r := range [][2]int{{-1, 2}, {0, 4}, {2, 2}, {3, 1}} {
		_, err := q.Inputs(r[0], r[1])
		require.ErrorContains(t, err, "sequences", "%v", r)
	}
	_, err = SeqQueries([]string{"a"}, seqs)
	require.ErrorContains(t, err, "1 names for 3 sequences")
	_, err = RaggedInputs([]*tensor.Tensor{tensor.MustFromSlice([]int64{1}, 1)})
	require.ErrorContains(t, err, "two inputs")
	_, err = RaggedInputs([]*tensor.Tensor{tensor.MustFromSlice([]int64{1}, 1), tensor.MustFromSlice([]int64{0, 2}, 2)})
	require.Error(t, err, "offsets past the ids")
}

// ImageQueries' inputs of a run of examples are a copy of those rows.
func TestImageQueries(t *testing.T) {
	x := tensor.MustFromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 1, 1, 2)
	q, err := ImageQueries([]string{"a", "b", "c"}, x)
	require.NoError(t, err)
	in, err := q.Inputs(1, 3)
	require.NoError(t, err)
	require.Equal(t, []float32{3, 4, 5, 6}, in[0].Float32s())
	require.Equal(t, tensor.Shape{2, 1, 1, 2}, in[0].Shape())
	_, err = q.Inputs(0, 4)
	require.ErrorContains(t, err, "images [0, 4) of 3")
	_, err = ImageQueries([]string{"a"}, x)
	require.ErrorContains(t, err, "for 1 names")
}

type fakeModel struct{}

func (fakeModel) Params() []*graph.Param                            { return nil }
func (fakeModel) Loss(*graph.Tape, *data.Batch) (*graph.Value, int) { return nil, 0 }

// ModelAs and NetOf accept their chapter's model type and name the type
// of any other.
func TestModelAs(t *testing.T) {
	_, err := ModelAs[fakeModel]("toy", fakeModel{})
	require.NoError(t, err)
	_, err = ModelAs[fakeModel]("toy", nil)
	require.ErrorContains(t, err, "toy: a model of type <nil>")
	called := false
	net := NetOf("toy", func(fakeModel) func(*graph.Value) *graph.Value {
		called = true
		return func(v *graph.Value) *graph.Value { return v }
	})
	f, err := net(fakeModel{})
	require.NoError(t, err)
	require.True(t, called)
	require.NotNil(t, f)
	_, err = ImageClassifier{Net: net}.Queries(nil, Input{})
	require.ErrorContains(t, err, "a model of type <nil>")
	_, err = ImageClassifier{}.Example(fakeModel{}, 1, 1)
	require.ErrorContains(t, err, "without its Net")
	c := ImageClassifier{Net: net, Channels: 1, Side: 2, DType: tensor.Float32}
	x, err := c.Example(fakeModel{}, 3, 0)
	require.NoError(t, err)
	require.Equal(t, tensor.Shape{3, 1, 2, 2}, x[0].Shape())
	_, err = c.Example(fakeModel{}, -1, 0)
	require.ErrorContains(t, err, "example of -1")
}
