//go:build !race

// sync.Pool (qgemm's workspaces) drops items at random under -race, so
// allocation counts are only meaningful without it.

package infer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// The int8 MNIST CNN's plan, one segment from the input to the logits,
// allocates nothing per call once warm: the segment's uint8 buffers come
// from its free list and the GEMM's from its pool.
func TestQuantizedRunAllocatesNothing(t *testing.T) {
	const batch = 16
	_, _, p := quantizedMNIST(t, batch, 1)
	x := randInput(t, 4, batch, 1, 28, 28)
	out := tensor.Empty(tensor.Float32, batch, 10)
	require.NoError(t, p.Run(out, x))
	require.Zero(t, testing.AllocsPerRun(20, func() {
		if err := p.Run(out, x); err != nil {
			t.Fatal(err)
		}
	}))
}
