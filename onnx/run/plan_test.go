package run

import (
	"bytes"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// planModels are the recorded models whose every batch runs on a plan:
// each node left after folding has a plan form.
var planModels = map[string]bool{"mlp": true, "cnn": true, "torch_mlp_opset17": true, "torch_mlp_default": true}

// Every recorded model gives the same outputs on the plan (Run) as on the
// interpreter (Interpret) within float32 tolerance, at batch 1 and 8, and
// PathFor names the path Run took.
func TestPlanMatchesInterpreter(t *testing.T) {
	for _, name := range recordedModels {
		t.Run(name, func(t *testing.T) {
			rec := loadRecorded(t, name)
			m, err := Load(filepath.Join("testdata", name+".onnx"))
			require.NoError(t, err)
			for _, c := range rec.Cases {
				in := map[string]*tensor.Tensor{}
				dims := map[string][]int{}
				for k, a := range c.Inputs {
					in[k] = a.tensor(t)
					dims[k] = a.Dims
				}
				path, why, err := m.PathFor(dims)
				require.NoError(t, err)
				t.Logf("batch %d: %v %s", c.Batch, path, why)
				if planModels[name] {
					assert.Equal(t, PathPlan, path, why)
				}
				got, err := m.Run(in)
				require.NoError(t, err)
				want, err := m.Interpret(in)
				require.NoError(t, err)
				require.Len(t, got, len(want))
				for k, w := range want {
					g := got[k]
					require.NotNil(t, g, k)
					require.Equal(t, w.Shape(), g.Shape(), k)
					require.Equal(t, w.DType(), g.DType(), k)
					scale := 1.0
					for i := range w.Size() {
						scale = max(scale, math.Abs(w.At(i)))
					}
					for i := range w.Size() {
						require.InDelta(t, w.At(i), g.At(i), 1e-5*scale, "%s[%d]", k, i)
					}
				}
			}
		})
	}
}

// Explain names the path and, on the plan, prints the plan's passes.
func TestExplainNamesPath(t *testing.T) {
	m, err := Load(filepath.Join("testdata", "cnn.onnx"))
	require.NoError(t, err)
	rec := loadRecorded(t, "cnn")
	dims := map[string][]int{}
	for k, a := range rec.Cases[0].Inputs {
		dims[k] = a.Dims
	}
	var b bytes.Buffer
	require.NoError(t, m.Explain(&b, dims))
	assert.Contains(t, b.String(), "path: plan")
	assert.Contains(t, b.String(), "after the passes")
}
