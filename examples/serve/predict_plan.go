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
// A plan holds for one input shape (infer.Cache's doc), so a batch of n
// images is padded with zero images to the next power of two, capped at
// maxBatch, and runs on that size's plan from an infer.Cache: at most
// ⌈log2 maxBatch⌉+1 plans (8 for a max batch of 64), each compiled by the
// first batch of its size. The padding rows are computed and dropped; the
// MNIST models treat each image on its own (batch norm on its moving
// statistics), so they change no real row. A cache per exact size would
// compile up to maxBatch plans, each with arenas as large as its batch;
// one plan for maxBatch would compute 64 rows for a lone request.
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

// bucket returns the plan size for n inputs: the next power of two at or
// above n, capped at max.
func bucket(n, max int) int {
	if n <= 1 {
		return 1
	}
	b := 1 << bits.Len(uint(n-1))
	if b > max {
		b = max
	}
	return b
}

// Predict pads the images into [B, 1, 28, 28] for B = bucket(len(batch)),
// runs B's plan (the model's softmax) and returns the first len(batch)
// rows. A batch larger than the max batch runs in chunks of it.
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
	for start := 0; start < len(batch); start += p.maxBatch {
		chunk := batch[start:min(start+p.maxBatch, len(batch))]
		preds, err := p.run(chunk)
		if err != nil {
			return nil, err
		}
		out = append(out, preds...)
	}
	return out, nil
}

// run runs one chunk of at most maxBatch images on its bucket's plan.
func (p *DigitPlanPredictor) run(batch [][]float32) ([]Prediction, error) {
	b := bucket(len(batch), p.maxBatch)
	x := make([]float32, b*Pixels) // rows past len(batch) stay zero images
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
	return predictions(probs.Float32s(), len(batch), sig[0].Shape[1]), nil
}
