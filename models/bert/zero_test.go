package bert_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/models/bert"
)

// Every exported function and method of package bert, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"BaseConfig":             bert.BaseConfig,
			"ReadConfig":             bert.ReadConfig,
			"New":                    bert.New,
			"NewBatch":               bert.NewBatch,
			"LoadPretrained":         bert.LoadPretrained,
			"NewMaskedLM":            bert.NewMaskedLM,
			"LoadMaskedLM":           bert.LoadMaskedLM,
			"NewSequenceClassifier":  bert.NewSequenceClassifier,
			"LoadSequenceClassifier": bert.LoadSequenceClassifier,
			"MaskTokens":             bert.MaskTokens,
		},
		Types: []any{
			(*bert.Config)(nil),
			(*bert.Model)(nil),
			(*bert.Batch)(nil),
			(*bert.Dense)(nil),
			(*bert.Norm)(nil),
			(*bert.Layer)(nil),
			(*bert.MaskedLM)(nil),
			(*bert.SequenceClassifier)(nil),
			(*bert.MaskConfig)(nil),
			(*bert.Masked)(nil),
			(*bert.ChapterConfig)(nil),
			(*bert.MLMChapter)(nil),
			(*bert.ClassifyChapter)(nil),
		},
	})
}
