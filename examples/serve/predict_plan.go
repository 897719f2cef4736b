package main

import (
	"context"
	"errors"
	"fmt"
	"math/bits"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/tensor"
)

// DigitPlanPredictor runs an MNIST classifier on compiled inference plans
// (package infer) instead of eval tapes. It implements
// Predictor[[]float32, Prediction] and answers as DigitPredictor does.
//
// A plan holds for one input shape (infer.Cache's doc), so plans are
// compiled for the powers of two below maxBatch and for maxBatch itself
// (at most ⌈log2 maxBatch⌉+1 plans: 7 for a max batch of 64, each
// compiled by the first batch of its size), and a batch of n images runs
// as pieces of those sizes, the largest first: 13 images run as 8, 4 and
// 1. No row is computed for nothing: the MNIST models' cost per image
// does not fall with the batch (a convolution is a GEMM per image, of
// 576 rows for the CNN's first), so padding 5 images to a plan of 8 would
// cost 8 images' work where the pieces 4 and 1 cost 5 and a call more. A
// cache per exact size would compile up to maxBatch plans, each with
// arenas as large as its batch; one plan for maxBatch would compute 64
// rows for a lone request.
type DigitPlanPredictor struct {
	plans    *infer.Cache
	maxBatch int
}

// NewDigitPlanPredictor compiles plans of net's forward pass for batches
// of up to maxBatch images; net's parameters are shared with the plans and
// must not change while it serves.
func NewDigitPlanPredictor(net mnist.Model, maxBatch int) (*DigitPlanPredictor, error) {
	if net == nil {
		return nil, errors.New("serve: digit plan predictor: nil model")
	}
	if maxBatch < 1 {
		return nil, fmt.Errorf("serve: digit plan predictor: max batch %d, want at least 1", maxBatch)
	}
	forward := func(tape *graph.Tape, in []*tensor.Tensor) *graph.Value {
		return graph.Softmax(net.Forward(tape.Const(in[0])), 1)
	}
	c, err := infer.NewCache(forward, infer.CacheOptions{Size: bits.Len(uint(maxBatch-1)) + 1})
	if err != nil {
		return nil, fmt.Errorf("serve: digit plan predictor: %w", err)
	}
	return &DigitPlanPredictor{plans: c, maxBatch: maxBatch}, nil
}

// piece returns the size of the next piece of a batch of n images: the
// largest power of two at or below n, or max when n is at least max.
func piece(n, max int) int {
	if n >= max {
		return max
	}
	if n <= 1 {
		return 1
	}
	return 1 << (bits.Len(uint(n)) - 1)
}

// Predict runs the images as pieces (piece) on their sizes' plans (the
// model's softmax) and returns a prediction per image, in order.
func (p *DigitPlanPredictor) Predict(ctx context.Context, batch [][]float32) ([]Prediction, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, img := range batch {
		if len(img) != Pixels {
			return nil, fmt.Errorf("serve: digit plan predictor: image %d has %d values, want %d (28×28)", i, len(img), Pixels)
		}
	}
	out := make([]Prediction, 0, len(batch))
	for start := 0; start < len(batch); {
		n := piece(len(batch)-start, p.maxBatch)
		preds, err := p.run(batch[start : start+n])
		if err != nil {
			return nil, err
		}
		out = append(out, preds...)
		start += n
	}
	return out, nil
}

// run runs one piece of images on the plan of its size.
func (p *DigitPlanPredictor) run(batch [][]float32) ([]Prediction, error) {
	b := len(batch)
	x := make([]float32, b*Pixels)
	for i, img := range batch {
		copy(x[i*Pixels:], img)
	}
	in, err := tensor.FromSlice(x, b, 1, 28, 28)
	if err != nil {
		return nil, fmt.Errorf("serve: digit plan predictor: %w", err)
	}
	plan, err := p.plans.Plan(in)
	if err != nil {
		return nil, fmt.Errorf("serve: digit plan predictor: batch %d: %w", b, err)
	}
	sig := plan.Outputs()
	if len(sig) != 1 || len(sig[0].Shape) != 2 || sig[0].Shape[0] != b || sig[0].Shape[1] < 1 || sig[0].DType != tensor.Float32 {
		return nil, fmt.Errorf("serve: digit plan predictor: plan output %v, want float32[%d, classes]", sig, b)
	}
	probs := tensor.Empty(tensor.Float32, sig[0].Shape...)
	if err := plan.Run(probs, in); err != nil {
		return nil, fmt.Errorf("serve: digit plan predictor: %w", err)
	}
	return predictions(probs.Float32s(), b, sig[0].Shape[1]), nil
}
