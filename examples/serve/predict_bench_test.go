package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/tensor"
)

// BenchmarkDigitPredict runs both engines (eval tape, compiled plans with
// max batch 64) side by side at each batch size.
func BenchmarkDigitPredict(b *testing.B) {
	for _, name := range []string{"cnn", "mlp"} {
		net, err := mnist.New(name, tensor.NewRNG(1))
		if err != nil {
			b.Fatal(err)
		}
		tape, _ := NewDigitPredictor(net)
		plan, err := NewDigitPlanPredictor(net, 64)
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range benchSizes {
			batch := make([][]float32, n)
			for i := range batch {
				batch[i] = make([]float32, Pixels)
			}
			for _, e := range []struct {
				engine string
				p      Predictor[[]float32, Prediction]
			}{{"tape", tape}, {"plan", plan}} {
				b.Run(fmt.Sprintf("%s/batch%d/%s", name, n, e.engine), func(b *testing.B) {
					cpu0, _ := processCPU()
					for b.Loop() {
						if _, err := e.p.Predict(context.Background(), batch); err != nil {
							b.Fatal(err)
						}
					}
					reportPerInput(b, n, cpu0, "images/s")
				})
			}
		}
	}
}

func BenchmarkSentimentPredict(b *testing.B) {
	words := make([]string, 5147)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", i)
	}
	words[len(words)-1] = "<unk>"
	v, err := data.NewVocab(words, "<unk>")
	if err != nil {
		b.Fatal(err)
	}
	rng := tensor.NewRNG(2)
	for _, name := range []string{"cnn", "lstm"} {
		net, err := sentiment.New(name, v.Len(), tensor.NewRNG(1))
		if err != nil {
			b.Fatal(err)
		}
		p, _ := NewSentimentPredictor(net, v)
		for _, n := range benchSizes {
			batch := make([][]int64, n)
			for i := range batch {
				batch[i] = make([]int64, 150+rng.IntN(50))
				for j := range batch[i] {
					batch[i][j] = int64(rng.IntN(v.Len()))
				}
			}
			b.Run(fmt.Sprintf("%s/batch%d", name, n), func(b *testing.B) {
				cpu0, _ := processCPU()
				for b.Loop() {
					if _, err := p.Predict(context.Background(), batch); err != nil {
						b.Fatal(err)
					}
				}
				reportPerInput(b, n, cpu0, "reviews/s")
			})
		}
	}
}

// benchSizes are the batch sizes the predictor benchmarks run: powers of
// two, and sizes between (the plan engine runs 13 as 8, 4 and 1).
var benchSizes = []int{1, 5, 8, 13, 16, 32, 33, 64}

// reportPerInput reports the inputs a second and the process's CPU time an
// input (getrusage, all threads) since cpu0: on a machine shared with
// other jobs the CPU time is the steadier figure.
func reportPerInput(b *testing.B, n int, cpu0 time.Duration, unit string) {
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), unit)
	if cpu1, ok := processCPU(); ok {
		b.ReportMetric(float64(cpu1-cpu0)/float64(time.Millisecond)/float64(b.N*n), "cpu-ms/input")
	}
}
