package onnx_test

import (
	"testing"

	"github.com/plumbml/plumb/internal/apicheck"
	"github.com/plumbml/plumb/onnx"
)

// Every exported function and method of package onnx, called with zero
// values and nils, returns an error or an empty value instead of
// panicking. The table is checked against the package's source.
func TestZeroValuesDoNotPanic(t *testing.T) {
	apicheck.Check(t, ".", apicheck.API{
		Funcs: map[string]any{
			"Load":              onnx.Load,
			"LoadWith":          onnx.LoadWith,
			"Decode":            onnx.Decode,
			"Inspect":           onnx.Inspect,
			"InspectWith":       onnx.InspectWith,
			"Supported":         onnx.Supported,
			"Float16ToFloat32":  onnx.Float16ToFloat32,
			"BFloat16ToFloat32": onnx.BFloat16ToFloat32,
			"Float16Bits":       onnx.Float16Bits,
			"BFloat16Bits":      onnx.BFloat16Bits,
			"ExactFloat64":      onnx.ExactFloat64,
		},
		Types: []any{
			(*onnx.Options)(nil),
			(*onnx.Opset)(nil),
			(*onnx.Model)(nil),
			(*onnx.Graph)(nil),
			(*onnx.Initializer)(nil),
			(*onnx.Value)(nil),
			(*onnx.Dim)(nil),
			(*onnx.ElemType)(nil),
			(*onnx.Node)(nil),
			(*onnx.Attr)(nil),
			(*onnx.Summary)(nil),
		},
		MayReturnNil: []string{"Graph.Initializer"},
	})
}
