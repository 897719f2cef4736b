package infer_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/infer"
)

// Explain says where the recurrent ops' input projections run: the
// stacked LSTM's three lstm_projected take theirs from the linear or
// linear_concat before them, and the translation encoder's GRU makes its
// own in one GEMM over all rows (lengths 5, 12 and 19: 36 rows).
func TestExplainRecurrentProjections(t *testing.T) {
	want := map[string][]string{
		"sentiment_lstm": {
			"step 2 lstm_projected: x·W [36×512] for all 36 rows computed by step 1 linear,",
			"step 5 lstm_projected: x·W [36×512] for all 36 rows computed by step 4 linear_concat,",
			"step 8 lstm_projected: x·W [36×512] for all 36 rows computed by step 7 linear_concat,",
		},
		"translate_encoder": {"step 1 gru: x·W for all 36 rows in one [36×32]·[32×96] GEMM inside the op"},
	}
	for _, m := range bookModels(t, 3) {
		lines, ok := want[m.name]
		if !ok {
			continue
		}
		g, err := infer.Trace(m.forward, m.inputs(1)...)
		require.NoError(t, err)
		p, err := g.Compile(infer.Options{})
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, p.Explain(&buf))
		require.Contains(t, buf.String(), "recurrent input projections (already over the whole sequence; no pass needed):")
		for _, l := range lines {
			require.Contains(t, buf.String(), l, m.name)
		}
	}
}
