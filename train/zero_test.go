package train_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/train"
)

// Every exported function and method of package train, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"NewBar":          train.NewBar,
			"LogTo":           train.LogTo,
			"PerBatch":        train.PerBatch,
			"PerEpoch":        train.PerEpoch,
			"Run":             train.Run[int],
			"Shard":           train.Shard[int],
			"Evaluate":        train.Evaluate[int],
			"EvaluateOn":      train.EvaluateOn[int],
			"OnDevice":        train.OnDevice[int],
			"MeanLossOn":      train.MeanLossOn[int],
			"MoveBatch":       train.MoveBatch[int],
			"Evaluation":      train.Evaluation[int],
			"MeanLoss":        train.MeanLoss[int],
			"Classification":  train.Classification,
			"EpochLine":       train.EpochLine,
			"NotifyInterrupt": train.NotifyInterrupt,
			"InterruptHooks":  train.InterruptHooks,
		},
		Types: []any{
			(*train.Bar)(nil),
			(*train.BatchEval[int])(nil),
			(*train.Config[int])(nil),
			(*train.Epoch)(nil),
			(*train.End)(nil),
			(*train.InterruptedError)(nil),
			(*train.Evaluator)(nil),
			(*train.Hooks)(nil),
			(*train.LR)(nil),
			(*train.LossFunc[int])(nil),
			(*train.Metrics)(nil),
			(*train.Phase)(nil),
			(*train.Progress)(nil),
			(*train.Replicas)(nil),
			(*train.Result)(nil),
			(*train.Source[int])(nil),
			(*train.Movable[int])(nil),
			(*train.Step)(nil),
		},
	})
}
