package tensor

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoGorgoniaDependency keeps package tensor, which every Plumb program
// imports, free of gorgonia.org/tensor and its transitive packages: the
// Gorgonia interop lives in tensor/dense, which only its users import.
func TestNoGorgoniaDependency(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the dependencies with")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "go list -deps: %s", out)
	for _, pkg := range strings.Fields(string(out)) {
		require.NotContains(t, pkg, "gorgonia", "package tensor depends on %s", pkg)
	}
}
