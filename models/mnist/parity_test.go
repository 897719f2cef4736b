package mnist

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/parity"
	"github.com/plumbml/plumb/tensor"
)

// TestCNNMatchesParityCase checks NewCNN against the parity goldens of the
// book's CNN: package parity checks its own copy of the network (it does
// not import the models), so this test ties that copy to NewCNN. Every
// parameter of NewCNN must be one the case names, of the case's shape,
// and the case may name no other.
func TestCNNMatchesParityCase(t *testing.T) {
	dir := filepath.Join("..", "..", "parity", "testdata")
	cases, err := parity.LoadCases(os.DirFS(dir))
	require.NoError(t, err)
	n := 0
	for _, c := range cases {
		if c.Op != "mnist_cnn" {
			continue
		}
		n++
		net, err := NewCNN(tensor.NewRNG(1), layers.DType(tensor.Float64))
		require.NoError(t, err)
		got := map[string]tensor.Shape{}
		for _, p := range net.Params() {
			got[p.Name] = p.Value.Shape()
		}
		want := map[string]tensor.Shape{}
		for name, i := range c.Params {
			f, err := os.Open(filepath.Join(dir, "mnist_cnn", c.Name, fmt.Sprintf("in%d.npy", i)))
			require.NoError(t, err)
			x, err := parity.ReadNpy(f)
			require.NoError(t, f.Close())
			require.NoError(t, err, "%s: %s", c.ID(), name)
			want[name] = x.Shape()
		}
		require.Equal(t, want, got, "%s: NewCNN's parameters and the golden case's", c.ID())
	}
	require.Positive(t, n, "no mnist_cnn case under %s", dir)
}
