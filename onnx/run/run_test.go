package run

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/tensor"
)

// recorded is a model's <name>.json written by testdata/make.py: per
// batch, the inputs and ONNX Runtime 1.31.1's outputs.
type recorded struct {
	Model string `json:"model"`
	Cases []struct {
		Batch   int                    `json:"batch"`
		Inputs  map[string]recordedArr `json:"inputs"`
		Outputs map[string]recordedArr `json:"outputs"`
	} `json:"cases"`
}

type recordedArr struct {
	DType  string    `json:"dtype"`
	Dims   []int     `json:"dims"`
	Values []float64 `json:"values"`
}

// tensor makes the recorded array a Plumb tensor (bool as int64 0/1).
func (a recordedArr) tensor(t *testing.T) *tensor.Tensor {
	t.Helper()
	var x *tensor.Tensor
	var err error
	switch a.DType {
	case "float32":
		v := make([]float32, len(a.Values))
		for i, f := range a.Values {
			v[i] = float32(f)
		}
		x, err = tensor.FromSlice(v, a.Dims...)
	case "float64":
		x, err = tensor.FromSlice(append([]float64(nil), a.Values...), a.Dims...)
	case "int32":
		v := make([]int32, len(a.Values))
		for i, f := range a.Values {
			v[i] = int32(f)
		}
		x, err = tensor.FromSlice(v, a.Dims...)
	case "int64", "bool":
		v := make([]int64, len(a.Values))
		for i, f := range a.Values {
			v[i] = int64(f)
		}
		x, err = tensor.FromSlice(v, a.Dims...)
	default:
		t.Fatalf("dtype %q", a.DType)
	}
	if len(a.Dims) == 0 {
		x = tensor.Scalar(float32(a.Values[0]))
		if a.DType != "float32" {
			x = tensor.Scalar(int64(a.Values[0]))
		}
	}
	require.NoError(t, err)
	return x
}

// maxDiff is the largest absolute difference between got and want (the
// shapes must be equal).
func maxDiff(t *testing.T, got *tensor.Tensor, want recordedArr) float64 {
	t.Helper()
	require.Equal(t, want.Dims, []int(got.Shape().Clone()), "shape")
	if len(want.Dims) == 0 {
		require.Equal(t, 1, got.Size())
	}
	d := 0.0
	for i, w := range want.Values {
		g := got.At(i)
		if got.DType() == tensor.Int64 {
			g = float64(got.Int64s()[i])
		}
		d = max(d, math.Abs(g-w))
		if math.IsNaN(g) != math.IsNaN(w) {
			d = math.Inf(1)
		}
	}
	return d
}

func loadRecorded(t *testing.T, name string) recorded {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	require.NoError(t, err)
	var r recorded
	require.NoError(t, json.Unmarshal(b, &r))
	require.NotEmpty(t, r.Cases)
	return r
}

// recordedModels are the models of testdata/make.py: hand-built graphs
// and torch.onnx.export's exports.
var recordedModels = []string{
	"mlp", "cnn", "textcnn", "shapes", "lstm", "gru_lbr0", "gru_lbr1", "extras13", "extras18",
	"torch_mlp_opset17", "torch_textcnn_opset17", "torch_lstm_opset17", "torch_gru_opset17",
	"torch_mlp_default", "torch_textcnn_default", "torch_lstm_default", "torch_gru_default",
	"nd17", "groupnorm18", "groupnorm21", "nd13", "hf_bert_opset17", "hf_gpt2_default",
}

// Every recorded model, compiled once, reproduces ONNX Runtime's outputs
// within 1e-4 at batch 1 and batch 8 (the batch dim is symbolic in every
// model, so one compiled model serves both).
func TestMatchesONNXRuntime(t *testing.T) {
	for _, name := range recordedModels {
		t.Run(name, func(t *testing.T) {
			r := loadRecorded(t, name)
			m, err := Load(filepath.Join("testdata", r.Model))
			require.NoError(t, err)
			batches := map[int]bool{}
			for _, c := range r.Cases {
				in := map[string]*tensor.Tensor{}
				for k, v := range c.Inputs {
					in[k] = v.tensor(t)
				}
				out, err := m.Run(in)
				require.NoError(t, err, "batch %d", c.Batch)
				require.Len(t, out, len(c.Outputs))
				for k, want := range c.Outputs {
					require.Contains(t, out, k)
					d := maxDiff(t, out[k], want)
					assert.LessOrEqual(t, d, 1e-4, "output %s at batch %d: max abs diff %g", k, c.Batch, d)
				}
				batches[c.Batch] = true
			}
			assert.Equal(t, map[int]bool{1: true, 8: true}, batches)
		})
	}
}

// The shape-arithmetic model folds everything its symbolic batch does not
// reach: of its nodes, only those on the batch's path run.
func TestShapeArithmeticFolds(t *testing.T) {
	m, err := Load(filepath.Join("testdata", "shapes.onnx"))
	require.NoError(t, err)
	var ran []string
	for _, st := range m.steps {
		ran = append(ran, st.n.Name)
	}
	assert.ElementsMatch(t, []string{
		"shape", "batch_dim", "unsq_batch", "concat_shape", "flatten", "expand_mask", "scale", "where",
		"ones", "add_ones", "slice", "batch_minus_1", "batch_again", "concat_shape3", "reshape3", "squeeze",
	}, ran)
	// The count output is a constant of the compiled model.
	out, err := m.Run(map[string]*tensor.Tensor{"x": tensor.Zeros(tensor.Float32, 3, 6, 4)})
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 1, 1}, out["count"].Int64s())
	assert.Equal(t, []int{3, 12}, []int(out["y"].Shape()))
	// The constant output is the caller's copy: writing to it leaves the
	// model as it was.
	out["count"].Int64s()[0] = 7
	out, err = m.Run(map[string]*tensor.Tensor{"x": tensor.Zeros(tensor.Float32, 1, 6, 4)})
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 1, 1}, out["count"].Int64s())
}

// A compiled model serves concurrent Runs: each goroutine's outputs equal
// the sequential ones.
func TestConcurrentRuns(t *testing.T) {
	r := loadRecorded(t, "cnn")
	m, err := Load(filepath.Join("testdata", r.Model))
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := r.Cases[g%len(r.Cases)]
			out, err := m.Run(map[string]*tensor.Tensor{"x": c.Inputs["x"].tensor(t)})
			if err != nil {
				errs <- err
				return
			}
			if d := maxDiff(t, out["y"], c.Outputs["y"]); d > 1e-4 {
				errs <- assert.AnError
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestRunInputErrors(t *testing.T) {
	m, err := Load(filepath.Join("testdata", "mlp.onnx"))
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		in   map[string]*tensor.Tensor
		want string
	}{
		{"missing", map[string]*tensor.Tensor{}, `no tensor for graph input "x"; expected a FLOAT tensor of dims [batch 12]`},
		{"dtype", map[string]*tensor.Tensor{"x": tensor.Zeros(tensor.Float64, 2, 12)}, `graph input "x" is float64 [2 12]; expected a FLOAT tensor of dims [batch 12]`},
		{"dims", map[string]*tensor.Tensor{"x": tensor.Zeros(tensor.Float32, 2, 11)}, `graph input "x" is float32 [2 11]; expected a FLOAT tensor of dims [batch 12]`},
		{"extra", map[string]*tensor.Tensor{"x": tensor.Zeros(tensor.Float32, 2, 12), "z": tensor.Zeros(tensor.Float32, 1)}, `"z" is not an input of the graph`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Run(tc.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	var nilModel *Model
	_, err = nilModel.Run(nil)
	assert.Error(t, err)
	_, err = Compile(nil)
	assert.Error(t, err)
}

func TestInspectListsUnsupported(t *testing.T) {
	m, err := onnx.Load(filepath.Join("testdata", "cnn.onnx"))
	require.NoError(t, err)
	s := Inspect(m)
	assert.Empty(t, s.Unsupported)
	assert.True(t, IsSupported("", "Conv"))
	assert.True(t, IsSupported("ai.onnx", "LSTM"))
	assert.False(t, IsSupported("com.microsoft", "Conv"))
	assert.False(t, IsSupported("", "NonMaxSuppression"))
	assert.True(t, strings.Contains(strings.Join(Supported(), " "), "Gemm"))
}
