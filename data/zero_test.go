package data_test

import (
	"testing"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package data, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"NewDataset":      data.NewDataset,
			"Dir":             data.Dir,
			"Limit":           data.Limit,
			"NewProgress":     data.NewProgress,
			"DenseField":      data.DenseField,
			"RaggedField":     data.RaggedField,
			"SeqField":        data.SeqField[int64],
			"FromExamples":    data.FromExamples,
			"NewLoader":       data.NewLoader,
			"NewStream":       data.NewStream,
			"LineSource":      data.LineSource,
			"Shuffle":         data.Shuffle,
			"DropLast":        data.DropLast,
			"BalanceBy":       data.BalanceBy,
			"BucketBy":        data.BucketBy,
			"ShuffleBuffer":   data.ShuffleBuffer,
			"Size":            data.Size,
			"BuildVocab":      data.BuildVocab,
			"NewVocab":        data.NewVocab,
			"LoadVocab":       data.LoadVocab,
			"LoadVocabLimits": data.LoadVocabLimits,
			"DefaultLimits":   data.DefaultLimits,
		},
		Types: []any{
			(*data.Progress)(nil),
			(*data.Dataset)(nil),
			(*data.Batch)(nil),
			(*data.Field)(nil),
			(*data.Loader)(nil),
			(*data.Stream)(nil),
			(*data.Option)(nil),
			(*data.Example)(nil),
			(*data.Counter)(nil),
			(*data.VocabConfig)(nil),
			(*data.Vocab)(nil),
			(*data.Limits)(nil),
		},
	})
}
