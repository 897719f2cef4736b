package ptb_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/data/ptb"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package ptb, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Read":         ptb.Read,
			"Load":         ptb.Load,
			"ReadLimits":   ptb.ReadLimits,
			"LoadLimits":   ptb.LoadLimits,
			"Vocab":        ptb.Vocab,
			"NGramDataset": ptb.NGramDataset,
			"LMDataset":    ptb.LMDataset,
			"NGrams":       ptb.NGrams,
		},
	})
}

// Zero values and nils reach every reader as errors, never as panics.
func TestZeroInputsAreErrors(t *testing.T) {
	errs := map[string]func() error{
		"Read":          func() error { _, err := ptb.Read(nil, ""); return err },
		"Load":          func() error { _, _, _, err := ptb.Load(""); return err },
		"ReadLimits":    func() error { _, err := ptb.ReadLimits(nil, "", data.Limits{}); return err },
		"LoadLimits":    func() error { _, _, _, err := ptb.LoadLimits("", data.Limits{}); return err },
		"NGramDataset":  func() error { _, err := ptb.NGramDataset(nil, nil, 5); return err },
		"NGramDataset0": func() error { _, err := ptb.NGramDataset(nil, new(data.Vocab), 5); return err },
		"LMDataset":     func() error { _, err := ptb.LMDataset(nil, nil, 0); return err },
	}
	for name, fn := range errs {
		require.NotPanics(t, func() { assert.Error(t, fn(), name) }, name)
	}
	assert.Nil(t, ptb.NGrams(nil, 0))
}
