package bert

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/checkpoint"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// parityDiffs loads the save_pretrained directory dir, runs it on the
// batch recorded in dir/io.safetensors (bench/bert_parity.py) and returns
// the largest absolute differences from transformers' last_hidden_state
// and pooler_output.
func parityDiffs(t *testing.T, dir string) (hidden, pooled float64) {
	t.Helper()
	m, err := LoadPretrained(dir, nil)
	require.NoError(t, err)
	io, _, err := checkpoint.Read(filepath.Join(dir, "io.safetensors"))
	require.NoError(t, err)
	tape := graph.NewEvalTape()
	defer tape.Release()
	h, p := m.Forward(tape, Batch{IDs: io["input_ids"], TokenTypes: io["token_type_ids"], AttentionMask: io["attention_mask"]})
	require.NoError(t, h.Err())
	require.NoError(t, p.Err())
	return maxDiff(t, h, io["last_hidden_state"]), maxDiff(t, p, io["pooler_output"])
}

func maxDiff(t *testing.T, v *graph.Value, want *tensor.Tensor) float64 {
	t.Helper()
	got, err := v.Host()
	require.NoError(t, err)
	require.Equal(t, want.Shape(), got.Shape())
	d := 0.0
	for i := range want.Size() {
		d = math.Max(d, math.Abs(got.At(i)-want.At(i)))
	}
	return d
}

// TestParity checks the committed 2-layer, 32-wide BertModel (random
// weights, random biases and LayerNorm parameters) against transformers'
// outputs on a ragged batch of lengths 11, 7, 1 and 4 with its attention
// mask and token types.
func TestParity(t *testing.T) {
	h, p := parityDiffs(t, "testdata/tiny")
	t.Logf("max |diff|: last_hidden_state %.3g, pooler_output %.3g", h, p)
	require.Less(t, h, 1e-5)
	require.Less(t, p, 1e-5)
}

// TestParityLarge checks the configs that are too large to commit
// (bench/bert_parity.py small and base) when PLUMB_BERT_PARITY names the
// directory holding small/ and base/:
//
//	CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_parity.py small /tmp/bert/small
//	CUDA_VISIBLE_DEVICES= /work/venv/bin/python bench/bert_parity.py base /tmp/bert/base
//	PLUMB_BERT_PARITY=/tmp/bert go test ./models/bert -run TestParityLarge -v
func TestParityLarge(t *testing.T) {
	root := os.Getenv("PLUMB_BERT_PARITY")
	if root == "" {
		t.Skip("PLUMB_BERT_PARITY is not set (bench/bert_parity.py writes the checkpoints)")
	}
	for _, name := range []string{"small", "base"} {
		t.Run(name, func(t *testing.T) {
			h, p := parityDiffs(t, filepath.Join(root, name))
			t.Logf("%s: max |diff|: last_hidden_state %.3g, pooler_output %.3g", name, h, p)
			require.Less(t, h, 1e-5)
			require.Less(t, p, 1e-5)
		})
	}
}

// The committed BertForMaskedLM and 3-class BertForSequenceClassification
// (1 layer, 16 wide, random heads) give transformers' logits on a ragged
// batch.
func TestHeadsParity(t *testing.T) {
	for _, name := range []string{"mlm", "cls"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("testdata", name)
			io, _, err := checkpoint.Read(filepath.Join(dir, "io.safetensors"))
			require.NoError(t, err)
			b := Batch{IDs: io["input_ids"], TokenTypes: io["token_type_ids"], AttentionMask: io["attention_mask"]}
			tape := graph.NewEvalTape()
			var logits *graph.Value
			if name == "mlm" {
				m, err := LoadMaskedLM(dir, nil)
				require.NoError(t, err)
				logits = m.Logits(tape, b, nil)
			} else {
				c, err := LoadSequenceClassifier(dir, nil)
				require.NoError(t, err)
				require.Equal(t, 3, c.Bert.Config.NumLabels())
				logits = c.Logits(tape, b)
			}
			require.NoError(t, logits.Err())
			d := maxDiff(t, logits, io["logits"])
			t.Logf("%s: max |diff| of the logits %.3g", name, d)
			require.Less(t, d, 1e-5)
		})
	}
}
