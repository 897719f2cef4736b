package data_test

import (
	"fmt"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/tensor"
)

// Sentences of different lengths, batched two at a time with length
// bucketing, each batch padded with a mask.
func Example() {
	sentences := [][]string{{"a", "good", "film"}, {"bad"}, {"not", "good"}, {"a", "very", "good", "film"}}
	var counts data.Counter
	for _, s := range sentences {
		counts.Add(s...)
	}
	vocab, _ := data.BuildVocab(&counts, data.VocabConfig{Specials: []string{data.Pad, data.Unk}, Unk: data.Unk})
	ids := make([][]int64, len(sentences))
	for i, s := range sentences {
		ids[i], _ = vocab.Encode(s)
	}
	ds, _ := data.NewDataset(data.SeqField("words", ids), data.DenseField("label", tensor.MustFromSlice([]int64{1, 0, 0, 1}, 4)))
	loader, _ := data.NewLoader(ds, 2, data.BucketBy("words", 2))
	for b, err := range loader.Batches(0) {
		if err != nil {
			panic(err)
		}
		padded, mask, _ := b.Padded("words", 0)
		fmt.Println(b.Index(), padded.Shape(), mask.Float32s(), b.Tensor("label").Int64s())
	}
	// Output:
	// [1 2] [2 2] [1 0 1 1] [0 0]
	// [0 3] [2 4] [1 1 1 0 1 1 1 1] [1 1]
}
