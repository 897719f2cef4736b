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
		"ReadPTB":        func() error { _, err := ReadPTB(nil, ""); return err },
		"LoadPTB":        func() error { _, _, _, err := LoadPTB(""); return err },
		"NGramDataset":   func() error { _, err := NGramDataset(nil, nil, 5); return err },
		"NGramDataset0":  func() error { _, err := NGramDataset(nil, new(Vocab), 5); return err },
		"LMDataset":      func() error { _, err := LMDataset(nil, nil, 0); return err },
		"ReadCIFAR10":    func() error { _, err := ReadCIFAR10(nil, ""); return err },
		"LoadCIFAR10":    func() error { _, _, err := LoadCIFAR10(""); return err },
		"LoadImageFolder": func() error {
			_, _, err := LoadImageFolder("", "")
			return err
		},
		"LoadIMDB":          func() error { _, _, err := LoadIMDB(""); return err },
		"IMDBDataset":       func() error { _, err := IMDBDataset(nil, nil); return err },
		"ReadCoNLL05":       func() error { _, err := ReadCoNLL05(nil, nil, "", ""); return err },
		"LoadCoNLL05":       func() error { _, err := LoadCoNLL05("", ""); return err },
		"SRLLabelVocab":     func() error { _, err := SRLLabelVocab(nil, ""); return err },
		"LoadSRLDicts":      func() error { _, _, _, err := LoadSRLDicts(""); return err },
		"SRLDataset":        func() error { _, err := SRLDataset(nil, nil, nil, nil); return err },
		"LoadMovieLens100K": func() error { _, err := LoadMovieLens100K(""); return err },
		"LoadMovieLens1M":   func() error { _, err := LoadMovieLens1M(""); return err },
		"MovieTitleVocab":   func() error { _, err := MovieTitleVocab(nil); return err },
		"MovieLens.Dataset": func() error { _, err := new(MovieLens).Dataset(nil); return err },
		"ReadParallel":      func() error { _, err := ReadParallel(nil, nil, "", "", nil); return err },
		"LoadParallel":      func() error { _, err := LoadParallel("", "", nil); return err },
		"ParallelDataset":   func() error { _, err := ParallelDataset(nil, nil, nil, 0); return err },
		"Dataset.Subset":    func() error { _, err := (*Dataset)(nil).Subset([]int{0}); return err },
		"Dataset.Split":     func() error { _, _, err := (*Dataset)(nil).Split(0.5, 1); return err },
		"Batch.Padded":      func() error { _, _, err := new(Batch).Padded("", 0); return err },
		"Vocab.Encode":      func() error { _, err := new(Vocab).Encode([]string{""}); return err },
		"Vocab.Decode":      func() error { _, err := new(Vocab).Decode([]int64{0}); return err },
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
		assert.Nil(t, NGrams(nil, 0))
		assert.Empty(t, Tokenize(""))
	})
}
