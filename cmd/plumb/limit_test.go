package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/tensor"
)

// --limit on a class-sorted set (the CIFAR JPEG tree's order) spans every
// class and says what it took; 0 keeps everything silently.
func TestLimitExamples(t *testing.T) {
	labels := make([]int64, 5000)
	for i := range labels {
		labels[i] = int64(i / 500)
	}
	ds, err := data.NewDataset(data.DenseField("label", tensor.MustFromSlice(labels, len(labels))))
	require.NoError(t, err)
	var out bytes.Buffer
	sub, err := limitExamples(ds, 512, 1, "label", &out)
	require.NoError(t, err)
	classes := map[int64]int{}
	for _, l := range sub.Tensor("label").Int64s() {
		classes[l]++
	}
	assert.Len(t, classes, 10)
	assert.Equal(t, "--limit 512: training on a random subset of 512 of 5000 examples (seed 1), stratified by label: 10 classes of 51 to 52\n", out.String())

	out.Reset()
	all, err := limitExamples(ds, 0, 1, "label", &out)
	require.NoError(t, err)
	assert.Same(t, ds, all)
	assert.Empty(t, out.String())
	_, err = limitExamples(nil, 5, 1, "label", &out)
	assert.ErrorContains(t, err, "--limit 5")
}
