package parity

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// TestTruthCriterion checks the rule for float32 tensors with a float64
// truth: an element passes when |got - truth| <= max(tolerance, 1.5 × TF's
// largest error against the truth over the tensor).
func TestTruthCriterion(t *testing.T) {
	tol := Tolerance{RTol: 1e-5, ATol: 1e-6}
	// Sums near zero: TF's float32 result is off the truth by up to 4e-5
	// (element 1), far beyond the tolerance.
	truth := []float64{0.5, 1e-3, -2e-4}
	want := []float64{0.5 + 1e-6, 1e-3 + 4e-5, -2e-4}
	tests := []struct {
		name      string
		got       []float64
		truth     []float64 // nil: the tensor has no truth
		tf        []float64 // TF's golden, when not want
		pass      bool
		wantIndex []int // the mismatch reported when it fails
	}{
		{name: "equal to TF", got: want, truth: truth, pass: true},
		{name: "equal to the truth", got: truth, truth: truth, pass: true},
		// 5.5e-5 from the truth at element 2: beyond the tolerance (and 5.5e-5
		// from TF's golden), within 1.5 × 4e-5 = 6e-5.
		{name: "passes only by the truth rule", got: []float64{0.5, 1e-3, -2e-4 - 5.5e-5}, truth: truth, pass: true},
		{name: "same result held to TF's golden alone", got: []float64{0.5, 1e-3, -2e-4 - 5.5e-5}, pass: false, wantIndex: []int{2}},
		// 6.5e-5 from the truth: beyond both the tolerance and 1.5 × TF's error.
		{name: "fails both", got: []float64{0.5, 1e-3 - 6.5e-5, -2e-4}, truth: truth, pass: false, wantIndex: []int{1}},
		// TF rounds onto the truth (its error is float32 rounding only), so
		// the tolerance applies to Plumb's error against the truth.
		{name: "within tolerance where TF is exact", got: []float64{0.5 + 4e-6, 1e-3, -2e-4}, truth: truth,
			tf: truth, pass: true},
		{name: "beyond tolerance where TF is exact", got: []float64{0.5 + 7e-6, 1e-3, -2e-4}, truth: truth,
			tf: truth, pass: false, wantIndex: []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pair{name: "out", got: f32(t, tt.got), want: f32(t, want)}
			if tt.tf != nil {
				p.want = f32(t, tt.tf)
			}
			if tt.truth != nil {
				p.truth = tensor.MustFromSlice(tt.truth, len(tt.truth))
			}
			r := compare(&Case{Op: "conv2d", Name: "x_f32"}, tol, []pair{p})
			assert.Equal(t, tt.truth != nil, r.Truth)
			if tt.pass {
				assert.False(t, r.Failed(), "%s", r.Message())
				return
			}
			require.True(t, r.Failed())
			require.Len(t, r.Mismatches, 1)
			m := r.Mismatches[0]
			assert.Equal(t, tt.wantIndex, m.Index)
			assert.Equal(t, tt.truth != nil, m.HasTruth)
			if m.HasTruth && tt.tf == nil {
				assert.InDelta(t, 4e-5, m.TFErr, 1e-7)
				assert.InDelta(t, 6e-5, m.Bound, 2e-7)
			}
			if m.HasTruth {
				assert.Contains(t, r.Message(), "float64 truth")
			}
		})
	}
}

// f32 makes a float32 vector, as a float32 case's golden and result are.
func f32(t *testing.T, v []float64) *tensor.Tensor {
	t.Helper()
	x := tensor.Zeros(tensor.Float32, len(v))
	for i, e := range v {
		x.SetAt(i, e)
	}
	return x
}

// TestTruthErrors checks the errors the truth rule folds into the result
// and the row: Plumb's and TF's largest absolute errors against the truth.
func TestTruthErrors(t *testing.T) {
	// One float32 ulp off the truth: Plumb's at 1 (2^-23), TF's at 2 (2^-22).
	truth := []float64{1, 2}
	p := pair{name: "out", got: f32(t, []float64{1 + 0x1p-23, 2}), want: f32(t, []float64{1, 2 + 0x1p-22}),
		truth: tensor.MustFromSlice(truth, 2)}
	c := &Case{Op: "mul", Name: "x_f32", DType: "float32"}
	r := compare(c, Tolerance{RTol: 1e-5, ATol: 1e-6}, []pair{p})
	require.False(t, r.Failed())
	assert.Equal(t, 0x1p-23, r.PlumbErr)
	assert.Equal(t, 0x1p-22, r.TFErr)
	rows := Rows([]CaseResult{r})
	require.Len(t, rows, 1)
	assert.Equal(t, 1, rows[0].TruthCases)
	assert.Equal(t, "max(atol 1e-06 + rtol 1e-05, 1.5×TF err)", rows[0].Bound)
	assert.Regexp(t, `mul\s+float32\s+1\s+\S+\s+\S+\s+1\.19e-07\s+2\.38e-07\s+max\(`, FormatTable(rows))

	// A case whose tensors lack a truth is held to the tolerance alone.
	p.truth = nil
	r = compare(c, Tolerance{RTol: 1e-5, ATol: 1e-6}, []pair{p})
	assert.False(t, r.Truth)
	assert.Zero(t, Rows([]CaseResult{r})[0].TruthCases)
}

// TestFloat32CasesHaveTruth checks that every float32 op and model case
// (dropout, whose mask differs by dtype, excepted) carries the float64
// truth of each of its tensors, that float64 cases carry none, and that
// the truth rule holds the former.
func TestFloat32CasesHaveTruth(t *testing.T) {
	for _, c := range loadCases(t) {
		pairs, err := evaluate(c)
		if !assert.NoError(t, err, c.ID()) {
			continue
		}
		wantTruth := c.DType == "float32" && (c.Kind == "op" || c.Kind == "model") && c.Op != "dropout"
		for _, p := range pairs {
			assert.Equalf(t, wantTruth, p.truth != nil, "%s: %s: truth_%s.npy present", c.ID(), p.name, p.name)
		}
	}
}

// TestTruthFileChecked checks that a truth of the wrong dtype or shape is
// an error naming the file, not a silent fallback.
func TestTruthFileChecked(t *testing.T) {
	dir := t.TempDir()
	c := caseByID(t, "relu/vec_f32")
	for _, f := range []string{"out.npy"} {
		b, err := os.ReadFile(testdata + "/relu/vec_f32/" + f)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(dir+"/relu/vec_f32", 0o755))
		require.NoError(t, os.WriteFile(dir+"/relu/vec_f32/"+f, b, 0o644))
		// out.npy as its own truth: float32, not float64.
		require.NoError(t, os.WriteFile(dir+"/relu/vec_f32/truth_"+f, b, 0o644))
	}
	bad := *c
	bad.fsys, bad.dir = os.DirFS(dir), "relu/vec_f32"
	_, err := bad.golden("out", tensor.Zeros(tensor.Float32, 1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "truth_out.npy is float32")
}

// TestLongConvolutionsPassOnTruth checks the cases that used to need a
// widened tolerance (3×3 convolutions over 16 and 24 channels: float32 dot
// products of 144 and 216 terms): held to TF's float32 golden alone, the
// default tolerance fails them; held to the float64 truth, they pass, and
// Plumb's error against the truth is below TF's.
func TestLongConvolutionsPassOnTruth(t *testing.T) {
	for _, id := range []string{"conv2d/winograd_same_f32", "conv2d/winograd_explicit_f32"} {
		t.Run(id, func(t *testing.T) {
			c := caseByID(t, id)
			require.Equal(t, "default", c.Tolerance)
			tol, err := toleranceFor(c, tensor.Float32)
			require.NoError(t, err)
			pairs, err := evaluate(c)
			require.NoError(t, err)
			r := compare(c, tol, pairs)
			require.True(t, r.Truth)
			assert.False(t, r.Failed(), "%s", r.Message())
			assert.Less(t, r.PlumbErr, r.TFErr)
			for i := range pairs {
				pairs[i].truth = nil
			}
			assert.True(t, compare(c, tol, pairs).Failed(), "without the truth the default tolerance fails %s", id)
		})
	}
}
