package kpi

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/runlog"
)

// FuzzParse feeds arbitrary bytes to the KPI file's parser. It must never
// panic; every entry it accepts has a model, a metric, a tolerance >= 0
// and, if relative, a baseline other than 0; and checking and reporting
// the accepted KPIs on a run of their model does not panic either.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`[{"model": "mnist-cnn", "metric": "accuracy", "baseline": 0.9829, "tolerance": 0.003, "higher_is_better": true}]`,
		`[{"model": "m", "metric": "samples_per_sec", "baseline": 5000, "tolerance": 0.8, "relative": true, "higher_is_better": true, "note": "x"}]`,
		`[{"model": "m", "metric": "x", "relative": true}]`,
		`[{"model": "m", "metric": "accuracy", "tolerence": 1}]`,
		`[] [`,
		`{}`,
		``,
		`[{"model": "m", "metric": "wall_s", "baseline": -1e308, "tolerance": 1e308}]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := Parse(bytes.NewReader(data), "fuzz.json")
		if err != nil {
			return
		}
		for _, k := range ks {
			require.NotEmpty(t, k.Model)
			require.NotEmpty(t, k.Metric)
			require.GreaterOrEqual(t, k.Tolerance, 0.0)
			if k.Relative {
				require.NotZero(t, k.Baseline)
			}
			r := &runlog.Run{Meta: runlog.Record{Kind: runlog.KindRun, Framework: "plumb", Model: k.Model},
				Epochs: []runlog.Record{{Kind: runlog.KindEpoch, Epoch: 1, Loss: 0.5, Metrics: map[string]float64{k.Metric: 0.5}}}}
			res, err := Check(ks, []*runlog.Run{r})
			require.NoError(t, err)
			_ = Report(io.Discard, res)
		}
	})
}
