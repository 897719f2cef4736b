package main

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	trainpkg "github.com/plumbml/plumb/train"
)

// A run stopped by Ctrl-C exits 130 and says where its state is; other
// errors stay 2.
func TestInterruptedExitStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{&trainpkg.InterruptedError{Epoch: 2, Step: 7, GlobalStep: 57, StatePath: "s.safetensors"}, trainpkg.ExitInterrupted},
		{fmt.Errorf("train mnist: %w", &trainpkg.InterruptedError{Epoch: 1}), 130},
		{fmt.Errorf("disk on fire"), 2},
	} {
		var stderr bytes.Buffer
		assert.Equal(t, tc.want, exitStatus(tc.err, &stderr), tc.err.Error())
		assert.Contains(t, stderr.String(), tc.err.Error())
	}
	var stderr bytes.Buffer
	exitStatus(&trainpkg.InterruptedError{Epoch: 2, Step: 7, GlobalStep: 57, StatePath: "s.safetensors"}, &stderr)
	assert.Contains(t, stderr.String(), "--resume s.safetensors")
}
