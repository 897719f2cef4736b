//go:build unix

package kpi

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A FIFO named as the KPI file is refused rather than read for ever.
func TestLoadRefusesFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "kpi.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	_, err := Load(fifo)
	require.ErrorContains(t, err, "is not a regular file")
}
