package infer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/tensor"
)

// BenchmarkMNISTCNNInt8 times the book's MNIST CNN at batch 64 as the
// float32 plan and as the int8 plan (min-max calibration on 4 random
// batches), one call per iteration; run with -cpu 1 for the issue's
// one-thread bar.
func BenchmarkMNISTCNNInt8(b *testing.B) {
	const batch = 64
	g, calib, qp := quantizedMNIST(b, batch, 4)
	fp, err := g.Compile(infer.Options{})
	require.NoError(b, err)
	q2, err := infer.Quantize(g, calib, infer.QuantOptions{Skip: []string{"conv2d_0"}})
	require.NoError(b, err)
	sp, err := q2.Graph.Compile(infer.Options{})
	require.NoError(b, err)
	x := randInput(b, 99, batch, 1, 28, 28)
	benchPlans(b, batch, tensor.Empty(tensor.Float32, batch, 10), x, []namedPlan{{"float32", fp}, {"int8", qp}, {"int8-skip-conv1", sp}})
}

type namedPlan struct {
	name string
	p    *infer.Plan
}

// benchPlans runs each plan on x into out as a sub-benchmark, reporting
// the process's CPU time a call beside the wall time: on a shared machine
// it is the steadier of the two.
func benchPlans(b *testing.B, batch int, out, x *tensor.Tensor, plans []namedPlan) {
	for _, c := range plans {
		p := c.p
		b.Run(c.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				if err := p.Run(out, x); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "images/s")
		})
	}
}
