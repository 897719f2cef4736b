package data

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Zero values and nils reach every constructor, reader and method of the
// dataset and text API as errors (or empty results), never as panics.
func TestDatasetAPIWithZeroValues(t *testing.T) {
	errs := map[string]func() error{
		"NewDataset":     func() error { _, err := NewDataset(); return err },
		"NewDataset{}":   func() error { _, err := NewDataset(Field{}); return err },
		"FromExamples":   func() error { _, err := FromExamples(nil); return err },
		"NewLoader":      func() error { _, err := NewLoader(nil, 0); return err },
		"NewLoader(new)": func() error { _, err := NewLoader(new(Dataset), 0, nil); return err },
		"NewStream":      func() error { _, err := NewStream(nil, 0); return err },
		"LoadVocab":      func() error { _, err := LoadVocab(nil, "", ""); return err },
		"Dataset.Subset": func() error { _, err := (*Dataset)(nil).Subset([]int{0}); return err },
		"Dataset.Split":  func() error { _, _, err := (*Dataset)(nil).Split(0.5, 1); return err },
		"Batch.Padded":   func() error { _, _, err := new(Batch).Padded("", 0); return err },
		"Vocab.Encode":   func() error { _, err := new(Vocab).Encode([]string{""}); return err },
		"Vocab.Require":  func() error { return (*Vocab)(nil).Require(BOS) },
		"Vocab.Decode":   func() error { _, err := new(Vocab).Decode([]int64{0}); return err },
		"Stream.Batches": func() error {
			for _, err := range new(Stream).Batches(0) {
				return err
			}
			return nil
		},
	}
	for name, fn := range errs {
		require.NotPanics(t, func() { assert.Error(t, fn(), name) }, name)
	}
	require.NotPanics(t, func() {
		var d *Dataset
		assert.Equal(t, 0, d.Len())
		assert.Nil(t, d.Names())
		assert.Nil(t, d.Tensor("x"))
		assert.Equal(t, 0, d.Take(3).Len())
		var b *Batch
		assert.Equal(t, 0, b.Len())
		assert.Nil(t, b.Tensor("x"))
		assert.Nil(t, b.Ragged("x"))
		assert.Nil(t, b.Index())
		l := new(Loader)
		assert.Equal(t, 0, l.Len())
		assert.Equal(t, 0, l.NumBatches())
		assert.Nil(t, l.Order(0))
		for range l.Batches(0) {
			t.Error("a zero Loader yields nothing")
		}
		assert.Equal(t, 0, new(Stream).Len())
		v := new(Vocab)
		assert.Equal(t, -1, v.ID("x"))
		assert.Equal(t, -1, v.UnkID())
		assert.Equal(t, 0, v.Len())
		var c Counter
		c.Add("a", "a")
		assert.Equal(t, 2, c.Count("a"))
		assert.Equal(t, 1, c.Len())
		empty, err := BuildVocab(nil, VocabConfig{})
		require.NoError(t, err)
		assert.Equal(t, 0, empty.Len())
		_ = SeqField[int64]("", nil)
	})
}
