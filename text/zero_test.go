package text_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/text"
)

// Every exported function and method of package text, called with zero
// values and nils, returns an error or a zero result instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"ReadWordPiece":  text.ReadWordPiece,
			"NewWordPiece":   text.NewWordPiece,
			"NewWordCounts":  text.NewWordCounts,
			"LearnWordPiece": text.LearnWordPiece,
			"LearnBPE":       text.LearnBPE,
			"NewBPE":         text.NewBPE,
			"Detokenize":     text.Detokenize,
		},
		Types: []any{
			(*text.WordPiece)(nil),
			(*text.WordPieceConfig)(nil),
			(*text.Encoding)(nil),
			(*text.WordCounts)(nil),
			(*text.LearnOptions)(nil),
			(*text.BPE)(nil),
			(*text.BPEConfig)(nil),
			(*text.Merge)(nil),
		},
	})
}
