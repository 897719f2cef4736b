package infer_test

import (
	"testing"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/internal/apicheck"
)

// Every exported function and method of package infer, called with zero
// values and nils, returns an error instead of panicking. The table is
// checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Trace":         infer.Trace,
			"TraceLayer":    infer.TraceLayer,
			"NewBuilder":    infer.NewBuilder,
			"NewCache":      infer.NewCache,
			"Calibrate":     infer.Calibrate,
			"Quantize":      infer.Quantize,
			"QuantizedMeta": infer.QuantizedMeta,
			"LoadQuantized": infer.LoadQuantized,
			"DynamicLayers": infer.DynamicLayers,
		},
		Types: []any{
			(*infer.Ref)(nil),
			(*infer.Graph)(nil),
			(*infer.Builder)(nil),
			(*infer.Signature)(nil),
			(*infer.Plan)(nil),
			(*infer.Options)(nil),
			(*infer.Forward)(nil),
			(*infer.Cache)(nil),
			(*infer.CacheOptions)(nil),
			(*infer.CalibMethod)(nil),
			(*infer.CalibOptions)(nil),
			(*infer.Range)(nil),
			(*infer.Calibration)(nil),
			(*infer.QuantOptions)(nil),
			(*infer.Quantized)(nil),
			(*infer.QuantLayer)(nil),
			(*infer.LayerError)(nil),
			(*infer.DynamicQuant)(nil),
		},
		MayReturnNil: []string{"Graph.Inputs", "Plan.Inputs", "Plan.Outputs", "Plan.Fallbacks", "Quantized.Layers", "Quantized.AllLayers"},
	})
}
