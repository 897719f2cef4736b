package checkpoint

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A failed sync of the directory after the rename is reported.
func TestSaveReportsDirectorySyncError(t *testing.T) {
	defer func(f func(string) error) { syncDir = f }(syncDir)
	syncDir = func(string) error { return errors.New("input/output error") }
	path := filepath.Join(t.TempDir(), "m.safetensors")
	err := Save(path, model(t, 1), nil)
	require.ErrorContains(t, err, "the file is in place, but syncing its directory failed: input/output error")
	require.FileExists(t, path)
}
