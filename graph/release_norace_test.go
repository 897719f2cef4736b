//go:build !race

// The race detector makes sync.Pool drop items at random, so what a step
// allocates means nothing under -race; this file is built without it.

package graph

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// bytesPerStep returns the bytes the heap grew by per step, over steps
// steps after one warm-up step.
func bytesPerStep(steps int, step func()) uint64 {
	step()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range steps {
		step()
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(steps)
}

// A released tape's next step takes its tensors from the pool: it
// allocates a small part of what a step on a new tape allocates.
func TestReleasedStepAllocatesLittle(t *testing.T) {
	rng := tensor.NewRNG(5)
	x, _ := tensor.RandNormal(rng, tensor.Float32, 0, 1, 64, 127)
	a, _ := tensor.RandNormal(rng, tensor.Float32, 0, 1, 127, 513)
	b, _ := tensor.RandNormal(rng, tensor.Float32, 0, 1, 513, 17)
	w1, w2 := NewParam("w1", a), NewParam("w2", b)
	run := func(tape *Tape) {
		_, _, loss := mlpStep(tape, x, w1, w2)
		if err := tape.Backward(loss); err != nil {
			t.Fatal(err)
		}
	}
	fresh := bytesPerStep(10, func() { run(NewTape()) })
	tape := NewTape()
	reused := bytesPerStep(10, func() { run(tape); tape.Release() })
	require.Less(t, 10*reused, fresh, "bytes per step: %d released, %d on new tapes", reused, fresh)
}

// Backward gives the storage of gradients that no later op reads back to
// the pool as it goes, so the gradients of a deep chain come from a few
// buffers instead of one new one per op: a chain of 64 tanh over 1 MiB
// tensors allocates under a quarter of its 64 MiB of gradients. A
// retained graph (SetRetainGraph) keeps every gradient and allocates them
// all.
func TestBackwardReusesDeadGradients(t *testing.T) {
	const n, depth = 1 << 18, 64 // float32: 1 MiB a tensor
	x, err := tensor.RandNormal(tensor.NewRNG(3), tensor.Float32, 0, 1, n)
	require.NoError(t, err)
	backwardBytes := func(retain bool) uint64 {
		tensor.TrimPool()
		tape := NewTape()
		tape.SetRetainGraph(retain)
		h := tape.Var(x)
		for range depth {
			h = Tanh(h)
		}
		loss := Sum(h)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		require.NoError(t, tape.Backward(loss))
		runtime.ReadMemStats(&after)
		require.Equal(t, n, tape.vars[0].Grad().Size(), "the leaf keeps its gradient")
		tape.Release()
		return after.TotalAlloc - before.TotalAlloc
	}
	freeing, retained := backwardBytes(false), backwardBytes(true)
	require.Less(t, freeing, uint64(depth*4*n/4), "bytes allocated by Backward: %d freeing, %d retained", freeing, retained)
	require.Greater(t, retained, uint64(depth*4*n), "a retained graph keeps every gradient")
}
