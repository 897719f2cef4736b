package optim_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/optim"
)

// Every exported function and method of package optim, called with zero
// values and nils, returns (an error, or a value carrying one) instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"ParamLR":            optim.ParamLR,
			"NewAdagrad":         optim.NewAdagrad,
			"NewAdam":            optim.NewAdam,
			"NewAdamW":           optim.NewAdamW,
			"ClipGlobalNorm":     optim.ClipGlobalNorm,
			"LR":                 optim.LR,
			"LRSchedule":         optim.LRSchedule,
			"Beta1":              optim.Beta1,
			"Beta2":              optim.Beta2,
			"Epsilon":            optim.Epsilon,
			"Momentum":           optim.Momentum,
			"Nesterov":           optim.Nesterov,
			"Rho":                optim.Rho,
			"Centered":           optim.Centered,
			"InitialAccumulator": optim.InitialAccumulator,
			"WeightDecay":        optim.WeightDecay,
			"L2":                 optim.L2,
			"GlobalClipNorm":     optim.GlobalClipNorm,
			"NewRMSProp":         optim.NewRMSProp,
			"Constant":           optim.Constant,
			"PiecewiseConstant":  optim.PiecewiseConstant,
			"ExponentialDecay":   optim.ExponentialDecay,
			"CosineDecay":        optim.CosineDecay,
			"Warmup":             optim.Warmup,
			"LinearDecay":        optim.LinearDecay,
			"InverseSqrtDecay":   optim.InverseSqrtDecay,
			"Noam":               optim.Noam,
			"NewSGD":             optim.NewSGD,
			"NewMomentum":        optim.NewMomentum,
		},
		Types: []any{
			(*optim.Optimizer)(nil),
			(*optim.Option)(nil),
			(*optim.Schedule)(nil),
			(*optim.ScheduleFunc)(nil),
		},
	})
}
