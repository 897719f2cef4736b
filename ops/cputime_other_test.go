//go:build !unix

package ops

import (
	"testing"
	"time"
)

// processCPU is not measured off unix; reportCPU then adds nothing.
func processCPU() time.Duration { return 0 }

func reportCPU(b *testing.B, start time.Duration) {}
