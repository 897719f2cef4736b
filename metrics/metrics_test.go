package metrics

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAccuracyArgmaxTopK(t *testing.T) {
	scores := []float32{
		0.1, 0.7, 0.2, // argmax 1
		0.5, 0.5, 0.0, // tie: first wins
		0.3, 0.3, 0.4, // argmax 2
		float32(math.NaN()), 0.1, 0.2,
	}
	labels := []int{1, 1, 0, 0}
	pred, err := Argmax(scores, 3)
	require.NoError(t, err)
	assert.Equal(t, []int{0 + 1, 0, 2, 2}, pred)
	acc, err := Accuracy(pred, labels)
	require.NoError(t, err)
	assert.Equal(t, 0.25, acc)
	tests := []struct {
		k    int
		want float64
	}{
		{1, 0.5}, // row 1's label ties the top: in, as in_top_k; the NaN label never is
		{2, 0.75},
		{3, 0.75},
	}
	for _, tc := range tests {
		got, err := TopK(scores, 3, labels, tc.k)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "k=%d", tc.k)
	}
	_, err = TopK(scores, 3, labels[:3], 1)
	assert.ErrorContains(t, err, "4 rows of 3 scores, 3 labels")
	_, err = TopK(scores, 3, []int{0, 0, 3, 0}, 1)
	assert.ErrorContains(t, err, "label 3 of row 2 outside [0, 3)")
	_, err = Argmax(scores, 5)
	assert.ErrorContains(t, err, "12 scores do not make rows of 5 classes")
	_, err = Accuracy(nil, nil)
	assert.Error(t, err)
}

// The confusion matrix of scikit-learn's precision_recall_fscore_support
// example: y_true [0 1 2 0 1 2], y_pred [0 2 1 0 0 1].
func TestConfusion(t *testing.T) {
	c, err := NewConfusion(3)
	require.NoError(t, err)
	require.NoError(t, c.Add([]int{0, 2, 1, 0, 0, 1}, []int{0, 1, 2, 0, 1, 2}))
	assert.Equal(t, int64(2), c.Count(0, 0))
	assert.InDelta(t, 2.0/3, c.Class(0).Precision, 1e-12)
	assert.Equal(t, 1.0, c.Class(0).Recall)
	assert.InDelta(t, 0.8, c.Class(0).F1, 1e-12)
	assert.Equal(t, PRF{}, c.Class(1))
	macro := c.Macro()
	assert.InDelta(t, 0.2222222222, macro.Precision, 1e-9) // sklearn: 0.22..., 0.33..., 0.26...
	assert.InDelta(t, 0.3333333333, macro.Recall, 1e-9)
	assert.InDelta(t, 0.2666666666, macro.F1, 1e-9)
	micro := c.Micro()
	assert.InDelta(t, 1.0/3, micro.F1, 1e-12) // = accuracy
	assert.ErrorContains(t, c.Add([]int{3}, []int{0}), "prediction 3 or label 0 at 0 outside [0, 3)")
	assert.ErrorContains(t, c.Add([]int{1}, nil), "1 predictions and 0 labels")
	_, err = NewConfusion(0)
	assert.Error(t, err)
}

func TestRMSEAndPerplexity(t *testing.T) {
	r, err := RMSE([]float64{1, 2, 3, 4}, []float64{1, 4, 3, 0})
	require.NoError(t, err)
	assert.InDelta(t, math.Sqrt(5), r, 1e-12) // (0 + 4 + 0 + 16) / 4
	_, err = RMSE([]float32{1}, nil)
	assert.Error(t, err)
	p, err := Perplexity(4*math.Log(10), 4) // every token at probability 1/10
	require.NoError(t, err)
	assert.InDelta(t, 10, p, 1e-12)
	_, err = Perplexity(1, 0)
	assert.ErrorContains(t, err, "at least 1 token")
}

func TestAUC(t *testing.T) {
	tests := []struct {
		name   string
		scores []float64
		labels []bool
		want   float64
	}{
		{"perfect", []float64{0.1, 0.2, 0.8, 0.9}, []bool{false, false, true, true}, 1},
		{"reversed", []float64{0.9, 0.8, 0.2, 0.1}, []bool{false, false, true, true}, 0},
		// sklearn's roc_auc_score example: [0.1, 0.4, 0.35, 0.8] -> 0.75
		{"sklearn", []float64{0.1, 0.4, 0.35, 0.8}, []bool{false, false, true, true}, 0.75},
		{"ties count half", []float64{0.5, 0.5, 0.5, 0.5}, []bool{false, true, false, true}, 0.5},
		{"tie across classes", []float64{0.1, 0.5, 0.5, 0.9}, []bool{false, false, true, true}, 0.875},
	}
	for _, tc := range tests {
		got, err := AUC(tc.scores, tc.labels)
		require.NoError(t, err, tc.name)
		assert.InDelta(t, tc.want, got, 1e-12, tc.name)
	}
	_, err := AUC([]float64{1, 2}, []bool{true, true})
	assert.ErrorContains(t, err, "2 positives and 0 negatives")
	_, err = AUC([]float64{math.NaN(), 2}, []bool{true, false})
	assert.ErrorContains(t, err, "score 0 is NaN")
}

// A case checked by hand against chunk_eval's rules, IOB with types A=0
// and B=1 (ids: B-A 0, I-A 1, B-B 2, I-B 3, O 4):
//
//	label: B-A I-A O   B-B I-B I-A O   I-B      -> A[0,1] B[3,4] A[5,5] B[7,7]
//	pred:  B-A I-A O   B-B B-B I-A I-A O        -> A[0,1] B[3,3] B[4,4] A[5,6]
//
// One correct chunk (A[0,1]) of 4 inferred and 4 labelled: P = R = F1 =
// 0.25. Excluding type B: A[0,1] correct of 2 inferred, 2 labelled: 0.5.
func TestChunkEvalByHand(t *testing.T) {
	label := []int{0, 1, 4, 2, 3, 1, 4, 3}
	pred := []int{0, 1, 4, 2, 2, 1, 1, 4}
	chunks, err := IOB.Chunks(label, 2)
	require.NoError(t, err)
	assert.Equal(t, []Chunk{{0, 1, 0}, {3, 4, 1}, {5, 5, 0}, {7, 7, 1}}, chunks)
	chunks, err = IOB.Chunks(pred, 2)
	require.NoError(t, err)
	assert.Equal(t, []Chunk{{0, 1, 0}, {3, 3, 1}, {4, 4, 1}, {5, 6, 0}}, chunks)

	tests := []struct {
		excluded []int
		counts   ChunkCounts
		prf      float64
	}{
		{nil, ChunkCounts{Inferred: 4, Labeled: 4, Correct: 1}, 0.25},
		{[]int{1}, ChunkCounts{Inferred: 2, Labeled: 2, Correct: 1}, 0.5},
		{[]int{0, 1}, ChunkCounts{}, 0},
	}
	for _, tc := range tests {
		ev, err := NewChunkEval(IOB, 2, tc.excluded...)
		require.NoError(t, err)
		require.NoError(t, ev.Add(pred, label))
		assert.Equal(t, tc.counts, ev.ChunkCounts, "excluded %v", tc.excluded)
		assert.Equal(t, PRF{tc.prf, tc.prf, tc.prf}, ev.PRF(), "excluded %v", tc.excluded)
	}
}

func TestChunkSchemes(t *testing.T) {
	tests := []struct {
		scheme Scheme
		tags   []string
		want   []Chunk
	}{
		{IOBES, []string{"S-X", "B-X", "I-X", "E-X", "I-X", "O", "E-X"}, []Chunk{{0, 0, 0}, {1, 3, 0}, {4, 4, 0}, {6, 6, 0}}},
		{IOE, []string{"I-X", "E-X", "I-X", "I-Y", "E-Y", "E-Y"}, []Chunk{{0, 1, 0}, {2, 2, 0}, {3, 4, 1}, {5, 5, 1}}},
		{Plain, []string{"X", "X", "Y", "O", "Y"}, []Chunk{{0, 1, 0}, {2, 2, 1}, {4, 4, 1}}},
		{IOB, []string{"I-X", "I-X", "B-X", "I-Y"}, []Chunk{{0, 1, 0}, {2, 2, 0}, {3, 3, 1}}},
	}
	for _, tc := range tests {
		ids, err := tc.scheme.Encode(tc.tags, []string{"X", "Y"})
		require.NoError(t, err)
		got, err := tc.scheme.Chunks(ids, 2)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%v %v", tc.scheme, tc.tags)
	}
	_, err := IOB.Encode([]string{"E-X"}, []string{"X"})
	assert.ErrorContains(t, err, `tag "E-X" at 0 is not a IOB tag`)
	_, err = IOB.Chunks([]int{5}, 2)
	assert.ErrorContains(t, err, "tag id 5 at 0 outside [0, 4]")
	ev, err := NewChunkEval(IOB, 2)
	require.NoError(t, err)
	assert.ErrorContains(t, ev.Add([]int{0}, nil), "1 predicted tags and 0 labels")
}

type goldens struct {
	BLEU []struct {
		Name           string
		Hyps           []string
		Refs           [][]string // sacreBLEU's layout: one stream per reference
		Score          float64
		Counts, Totals [4]int
		SysLen         int `json:"sys_len"`
		RefLen         int `json:"ref_len"`
	}
	Chunk []struct {
		Name                  string
		Scheme                string
		Types                 []string
		Labels, Preds         [][]string
		Precision, Recall, F1 float64
	}
}

func readGoldens(t *testing.T) goldens {
	b, err := os.ReadFile("testdata/goldens.json")
	require.NoError(t, err)
	var g goldens
	require.NoError(t, json.Unmarshal(b, &g))
	require.NotEmpty(t, g.BLEU)
	require.NotEmpty(t, g.Chunk)
	return g
}

// BLEU agrees with sacreBLEU 2.4.3's corpus_bleu (recorded by
// testdata/record.py) to 0.1 BLEU, and its counts exactly.
func TestBLEUAgreesWithSacreBLEU(t *testing.T) {
	for _, c := range readGoldens(t).BLEU {
		refs := make([][]string, len(c.Hyps))
		for _, stream := range c.Refs {
			for i, r := range stream {
				refs[i] = append(refs[i], r)
			}
		}
		got, err := BLEU(c.Hyps, refs)
		require.NoError(t, err, c.Name)
		assert.InDelta(t, c.Score, got.Score, 0.1, c.Name)
		assert.InDelta(t, c.Score, got.Score, 1e-9, c.Name) // in fact to round-off
		assert.Equal(t, c.Counts, got.Counts, c.Name)
		assert.Equal(t, c.Totals, got.Totals, c.Name)
		assert.Equal(t, [2]int{c.SysLen, c.RefLen}, [2]int{got.SysLen, got.RefLen}, c.Name)
	}
	_, err := BLEU([]string{"a"}, nil)
	assert.ErrorContains(t, err, "1 hypotheses and 0 reference sets")
	_, err = BLEU([]string{"a"}, [][]string{{}})
	assert.ErrorContains(t, err, "hypothesis 0 has no reference")
}

func TestTokenize13a(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Hello, world!", "Hello , world !"},
		{"It costs $1,000.50 (net).", "It costs $ 1,000.50 ( net ) ."},
		{"U.S.-based e-mail 5-6", "U . S . -based e-mail 5 - 6"}, // the outputs of sacreBLEU 2.4.3
		{"&quot;quoted&quot; &amp;lt;", `" quoted " <`},
		{"line-\nbreak<skipped>", "linebreak"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, Tokenize13a(tc.in), tc.in)
	}
}

// Chunk P/R/F1 in IOB and IOBES agree with seqeval 1.2.2's default
// (conlleval) mode on random tag sequences with errors.
func TestChunkEvalAgreesWithSeqeval(t *testing.T) {
	for _, c := range readGoldens(t).Chunk {
		scheme := map[string]Scheme{"IOB": IOB, "IOBES": IOBES}[c.Scheme]
		ev, err := NewChunkEval(scheme, len(c.Types))
		require.NoError(t, err)
		for i := range c.Labels {
			label, err := scheme.Encode(c.Labels[i], c.Types)
			require.NoError(t, err)
			pred, err := scheme.Encode(c.Preds[i], c.Types)
			require.NoError(t, err)
			require.NoError(t, ev.Add(pred, label))
		}
		got := ev.PRF()
		assert.InDelta(t, c.Precision, got.Precision, 1e-12, c.Name)
		assert.InDelta(t, c.Recall, got.Recall, 1e-12, c.Name)
		assert.InDelta(t, c.F1, got.F1, 1e-12, c.Name)
	}
}
