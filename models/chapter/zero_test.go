package chapter_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/models/chapter"
)

// Every exported function and method of package chapter, called with zero
// values and nils, returns an error instead of panicking.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"EncodeMeta":     chapter.EncodeMeta,
			"DecodeMeta":     chapter.DecodeMeta,
			"VocabMeta":      chapter.VocabMeta,
			"ParseVocab":     chapter.ParseVocab,
			"SameVocab":      chapter.SameVocab,
			"Limit":          chapter.Limit,
			"Lines":          chapter.Lines,
			"WrongModel":     chapter.WrongModel,
			"ReadImages":     chapter.ReadImages,
			"Classify":       chapter.Classify,
			"PredictPlanned": chapter.PredictPlanned,
			"ImageQueries":   chapter.ImageQueries,
			"SeqQueries":     chapter.SeqQueries,
			"SeqInputs":      chapter.SeqInputs,
			"RaggedInputs":   chapter.RaggedInputs,
			"ModelAs":        chapter.ModelAs[chapter.Model],
			"NetOf":          chapter.NetOf[chapter.Model],
			"Excerpt":        chapter.Excerpt,
		},
		Types: []any{
			(*chapter.Model)(nil),
			(*chapter.Chapter)(nil),
			(*chapter.Options)(nil),
			(*chapter.Setup)(nil),
			(*chapter.Input)(nil),
			(*chapter.Spec)(nil),
			(*chapter.Queries)(nil),
			(*chapter.Plannable)(nil),
			(*chapter.Planned)(nil),
			(*chapter.ImageClassifier)(nil),
		},
	})
}
