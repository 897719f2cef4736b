package layers

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/internal/testdev"
	"github.com/plumbml/plumb/internal/testdev/devicetest"
	_ "github.com/plumbml/plumb/internal/testdev/kernels"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// A small Transformer language model (embeddings with learned positions,
// an encoder layer with dropout on the attention probabilities, a
// decoder layer over it, the output tied to the embeddings,
// label-smoothed loss on the real steps) takes the same step with its
// parameters on the test device as on the host: the constants the layers
// make (masks, scales, position ids) go to the device.
func TestTransformerStepOnDevice(t *testing.T) {
	ids := tensor.MustFromSlice([]int64{1, 4, 2, 7, 0, 3, 5, 0}, 2, 4)
	labels := tensor.MustFromSlice([]int64{4, 2, 7, 1, 5, 6}, 6)
	lengths := []int{4, 2}
	build := func() ([]*graph.Param, func(*graph.Tape) *graph.Value, error) {
		rng := rand.New(rand.NewPCG(3, 3))
		cfg := TransformerConfig{DModel: 8, Heads: 2, FF: 12, Dropout: 0.1, AttentionDropout: 0.2, PreNorm: true}
		emb, err := NewEmbedding("emb", EmbeddingConfig{Vocab: 9, Dim: 8}, rng)
		if err != nil {
			return nil, nil, err
		}
		pos, err := NewPositionEmbedding("pos", 8, 8, rng)
		if err != nil {
			return nil, nil, err
		}
		enc, err := NewTransformerEncoderLayer("enc", cfg, rng)
		if err != nil {
			return nil, nil, err
		}
		dec, err := NewTransformerDecoderLayer("dec", cfg, rng)
		if err != nil {
			return nil, nil, err
		}
		out, err := NewTiedOutput("out", emb)
		if err != nil {
			return nil, nil, err
		}
		loss := func(tape *graph.Tape) *graph.Value {
			x := ids
			if dev := graph.DeviceOf(emb.Params()); dev != nil {
				if x, err = tape.Move(ids, dev); err != nil {
					return tape.Fail(err)
				}
			}
			h := pos.Forward(emb.Lookup(tape, x))
			a := ops.AttentionAttrs{KeyLengths: lengths}
			m := enc.Forward(h, nil, a)
			y := dec.Forward(h, m, nil, a, a)
			rows := Unpad(out.Forward(y), lengths)
			lb := labels
			if dev := rows.Values.Device(); dev != nil {
				if lb, err = tape.Move(labels, dev); err != nil {
					return tape.Fail(err)
				}
			}
			return LabelSmoothedCrossEntropy(rows.Values, lb, 0.1)
		}
		return Params(emb, pos, enc, dec, out), loss, nil
	}
	require.NoError(t, devicetest.SameStep(build, testdev.New("test:0"), 1e-5))
}
