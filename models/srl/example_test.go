package srl_test

import (
	"fmt"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/models/srl"
	"github.com/plumbml/plumb/tensor"
)

// A small db_lstm (the book's is srl.Book: hidden 512, depth 8) tags two
// sentences of 4 and 2 words: a batch holds one ragged id field per
// feature (srl.Features), and Decode returns each sentence's Viterbi path.
func ExampleModel_Decode() {
	sizes := srl.Sizes{Words: 20, Verbs: 5, Labels: 4, WordDim: 8, MarkDim: 2, Hidden: 16, Depth: 2}
	m, err := srl.New(sizes, tensor.NewRNG(1))
	if err != nil {
		fmt.Println(err)
		return
	}
	// Each feature's ids for the two sentences: the words, the five words
	// around the predicate (0 pads) repeated at every word, the predicate's
	// verb id, and the mark of the predicate's position.
	ids := map[string][][]int64{
		"word":   {{3, 7, 11, 2}, {5, 9}},
		"ctx_n2": {{0, 0, 0, 0}, {0, 0}},
		"ctx_n1": {{3, 3, 3, 3}, {5, 5}},
		"ctx_0":  {{7, 7, 7, 7}, {9, 9}},
		"ctx_p1": {{11, 11, 11, 11}, {0, 0}},
		"ctx_p2": {{2, 2, 2, 2}, {0, 0}},
		"verb":   {{1, 1, 1, 1}, {3, 3}},
		"mark":   {{0, 1, 0, 0}, {0, 1}},
	}
	var fields []data.Field
	for _, f := range srl.Features {
		fields = append(fields, data.SeqField(f, ids[f]))
	}
	ds, err := data.NewDataset(fields...)
	if err != nil {
		fmt.Println(err)
		return
	}
	loader, _ := data.NewLoader(ds, 2)
	for b, err := range loader.Batches(0) {
		if err != nil {
			fmt.Println(err)
			return
		}
		paths, err := m.Decode(graph.NewEvalTape(), b)
		if err != nil {
			fmt.Println(err)
			return
		}
		for i, p := range paths {
			fmt.Printf("sentence %d: %d tags\n", i, len(p))
		}
	}
	// Output:
	// sentence 0: 4 tags
	// sentence 1: 2 tags
}
