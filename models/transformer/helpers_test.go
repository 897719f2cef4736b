package transformer

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// perturb adds N(0, std²) noise drawn from seed to every parameter of m,
// so that a random model's decoding does not merely repeat its input token
// (a tied output projection of a fresh model favours the token just fed)
// and the hypotheses differ.
func perturb(t testing.TB, m *Model, std float64, seed uint64) {
	t.Helper()
	rng := tensor.NewRNG(seed)
	for _, p := range m.Params() {
		noise, err := tensor.RandNormal(rng, p.Value.DType(), 0, std, p.Value.Shape()...)
		require.NoError(t, err)
		for i := range p.Value.Size() {
			p.Value.SetAt(i, p.Value.At(i)+noise.At(i))
		}
	}
}
