package infer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/infer"
)

// BenchmarkDynamicInt8 times the text CNN, the stacked LSTM and the
// translation encoder at batch 64 (sentences of 5 to 27 words) as the
// float32 plan and as the dynamic int8 plan, one call per iteration, the
// two alternating in each -count round; run with -cpu 1 for the issue's
// one-thread bar.
func BenchmarkDynamicInt8(b *testing.B) {
	for _, m := range bookModels(b, 64)[1:] {
		in := m.inputs(5)
		g, err := infer.Trace(m.forward, m.inputs(1)...)
		require.NoError(b, err)
		fp, err := g.Compile(infer.Options{})
		require.NoError(b, err)
		qp, err := g.Compile(infer.Options{Dynamic: &infer.DynamicQuant{}})
		require.NoError(b, err)
		out, err := fp.Forward(in...)
		require.NoError(b, err)
		for _, c := range []struct {
			name string
			p    *infer.Plan
		}{{"float32", fp}, {"int8", qp}} {
			p := c.p
			b.Run(m.name+"/"+c.name, func(b *testing.B) {
				cpu0 := cpuTime()
				for b.Loop() {
					if err := p.Run(out[0], in...); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
