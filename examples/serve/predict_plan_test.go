package main

import (
	"context"
	"io"
	"math"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/models/mnist"
	"github.com/plumbml/plumb/tensor"
)

// A batch runs as pieces of the largest power of two that fits, or of
// the max batch.
func TestPiece(t *testing.T) {
	for _, tc := range []struct{ n, max, want int }{
		{0, 64, 1}, {1, 64, 1}, {2, 64, 2}, {3, 64, 2}, {5, 64, 4}, {8, 64, 8}, {15, 64, 8},
		{33, 64, 32}, {63, 64, 32}, {64, 64, 64}, {65, 64, 64}, {5, 6, 4}, {6, 6, 6}, {7, 6, 6}, {1, 1, 1}, {2, 1, 1},
	} {
		assert.Equal(t, tc.want, piece(tc.n, tc.max), "piece(%d, %d)", tc.n, tc.max)
	}
}

// requireRelClose checks every probability of got against want within
// tol relative (of the larger magnitude) and the same class.
func requireRelClose(t *testing.T, want, got []Prediction, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		require.Len(t, got[i].Probs, len(want[i].Probs), "%s: row %d", what, i)
		for c, w := range want[i].Probs {
			g := got[i].Probs[c]
			d := math.Abs(float64(g) - float64(w))
			require.LessOrEqual(t, d, tol*math.Max(math.Abs(float64(w)), math.Abs(float64(g))),
				"%s: row %d class %d: plan %v, tape %v", what, i, c, g, w)
		}
		assert.Equal(t, want[i].Class, got[i].Class, "%s: row %d", what, i)
	}
}

// The plan engine answers as the eval tape does within 1e-5 relative, at
// batch 1, at odd batches run in pieces, at the max batch and above it,
// for both MNIST classifiers.
func TestDigitPlanPredictorMatchesTape(t *testing.T) {
	for _, name := range []string{"mlp", "cnn"} {
		t.Run(name, func(t *testing.T) {
			net, err := mnist.New(name, tensor.NewRNG(5))
			require.NoError(t, err)
			tape, err := NewDigitPredictor(net)
			require.NoError(t, err)
			plan, err := NewDigitPlanPredictor(net, 8)
			require.NoError(t, err)
			for _, n := range []int{1, 3, 5, 8, 11} {
				imgs := randomImages(uint64(20+n), n)
				want, err := tape.Predict(context.Background(), imgs)
				require.NoError(t, err)
				got, err := plan.Predict(context.Background(), imgs)
				require.NoError(t, err)
				requireRelClose(t, want, got, 1e-5, name)
			}
			// 1; 2 and 1 (3); 4 and 1 (5); 8; 8, 2 and 1 (11)
			assert.Equal(t, 4, plan.plans.Len(), "one plan per piece size seen")
		})
	}
}

// --engine picks the predictor; the server's answers on the plan engine
// equal the tape engine's.
func TestEngineFlag(t *testing.T) {
	_, err := parse([]string{"--engine", "jit"}, io.Discard)
	assert.ErrorContains(t, err, `--engine "jit": want plan or tape`)
	answers := map[string]map[string]any{}
	for _, engine := range []string{"plan", "tape"} {
		o, err := parse([]string{"--digit", "cnn", "--fresh", "--engine", engine, "--max-batch", "8"}, io.Discard)
		require.NoError(t, err)
		m, err := o.loadModels()
		require.NoError(t, err)
		switch engine {
		case "plan":
			assert.IsType(t, &DigitPlanPredictor{}, m.digit)
		case "tape":
			assert.IsType(t, &DigitPredictor{}, m.digit)
		}
		s, err := m.server(o.server, quickBatch, o.maxWords)
		require.NoError(t, err)
		code, _, out := do(t, s, http.MethodPost, "/v1/digit", pixelsJSON(3*28+5, Pixels))
		require.Equal(t, http.StatusOK, code, out)
		answers[engine] = out
		require.NoError(t, s.Drain(context.Background()))
	}
	assert.Equal(t, answers["tape"]["class"], answers["plan"]["class"])
	pp, tp := answers["plan"]["probabilities"].([]any), answers["tape"]["probabilities"].([]any)
	require.Len(t, pp, 10)
	require.Len(t, tp, 10)
	for c := range tp {
		assert.InEpsilon(t, tp[c].(float64), pp[c].(float64), 1e-5, "class %d", c)
	}
}
