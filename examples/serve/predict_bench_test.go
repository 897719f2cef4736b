package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/models/sentiment"
	"github.com/plumbml/plumb/tensor"
)

func BenchmarkDigitPredict(b *testing.B) {
	for _, name := range []string{"cnn", "mlp"} {
		net, err := mnist.New(name, tensor.NewRNG(1))
		if err != nil {
			b.Fatal(err)
		}
		p, _ := NewDigitPredictor(net)
		for _, n := range []int{1, 64} {
			batch := make([][]float32, n)
			for i := range batch {
				batch[i] = make([]float32, Pixels)
			}
			b.Run(fmt.Sprintf("%s/batch%d", name, n), func(b *testing.B) {
				for b.Loop() {
					if _, err := p.Predict(context.Background(), batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "images/s")
			})
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
		for _, n := range []int{1, 64} {
			batch := make([][]int64, n)
			for i := range batch {
				batch[i] = make([]int64, 150+rng.IntN(50))
				for j := range batch[i] {
					batch[i][j] = int64(rng.IntN(v.Len()))
				}
			}
			b.Run(fmt.Sprintf("%s/batch%d", name, n), func(b *testing.B) {
				for b.Loop() {
					if _, err := p.Predict(context.Background(), batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "reviews/s")
			})
		}
	}
}
