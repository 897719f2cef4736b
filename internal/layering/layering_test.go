package layering

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listed is what the checker needs of one package of `go list -json`.
type listed struct {
	ImportPath string
	Standard   bool
	Module     *struct{ Path string }
	Imports    []string
}

// goList runs `go list -deps -json` over the whole module with the build
// tags tags and returns its packages, Plumb's with module-relative paths.
func goList(t *testing.T, tags string) []Package {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the imports with")
	}
	modOut, err := exec.Command(goBin, "list", "-m").Output()
	require.NoError(t, err, "go list -m")
	mod := strings.TrimSpace(string(modOut))
	cmd := exec.Command(goBin, "list", "-deps", "-json", "-tags", tags, mod+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list -deps -json -tags %q: %s", tags, stderr.String())

	rel := func(p string) (string, bool) {
		if p == mod {
			return "", true
		}
		r, ok := strings.CutPrefix(p, mod+"/")
		return r, ok
	}
	var pkgs []Package
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		if l.Standard {
			continue
		}
		p := Package{Path: l.ImportPath}
		p.Path, p.Local = rel(l.ImportPath)
		if !p.Local {
			p.Path = l.ImportPath
		}
		for _, imp := range l.Imports {
			if isStandard(imp) {
				continue
			}
			i := Import{Path: imp}
			if r, ok := rel(imp); ok {
				i = Import{Path: r, Local: true}
			}
			p.Imports = append(p.Imports, i)
		}
		pkgs = append(pkgs, p)
	}
	require.NotEmpty(t, pkgs)
	return pkgs
}

// isStandard reports whether an import path is the standard library's (its
// first element has no dot) or cgo's "C".
func isStandard(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}

// TestModuleFollowsTheRules checks every import of every Plumb package,
// in a default build and with the build tags of the CUDA backend and the
// MPI binding, against Rules.
func TestModuleFollowsTheRules(t *testing.T) {
	for _, tags := range []string{"", "cuda,mpi"} {
		t.Run("tags="+tags, func(t *testing.T) {
			for _, v := range Check(Rules, goList(t, tags)) {
				t.Error(v)
			}
		})
	}
}

func local(path string, imports ...string) Package {
	p := Package{Path: path, Local: true}
	for _, i := range imports {
		p.Imports = append(p.Imports, Import{Path: i, Local: isLocalPattern(i)})
	}
	return p
}

// TestCheckReportsForbiddenImports feeds the checker import graphs that
// break the layering and ones that keep it.
func TestCheckReportsForbiddenImports(t *testing.T) {
	for _, c := range []struct {
		name string
		pkg  Package
		want []Violation
	}{
		{"tensor may import internal/par", local("tensor", "internal/par"), nil},
		{"tensor must not import graph", local("tensor", "internal/par", "graph"), []Violation{{"tensor", "graph"}}},
		{"tensor must not import gorgonia", local("tensor", "gorgonia.org/tensor"), []Violation{{"tensor", "gorgonia.org/tensor"}}},
		{"tensor/dense may import gorgonia", local("tensor/dense", "tensor", "gorgonia.org/tensor"), nil},
		{"ops must not import graph", local("ops", "tensor", "internal/gemm", "graph"), []Violation{{"ops", "graph"}}},
		{"ops must not import its test device", local("ops", "internal/testdev"), []Violation{{"ops", "internal/testdev"}}},
		{"internal slice packages import each other", local("internal/conv", "tensor", "internal/par", "internal/gemm", "internal/vec"), nil},
		{"internal slice packages stay below ops", local("internal/conv", "ops"), []Violation{{"internal/conv", "ops"}}},
		{"graph must not import layers", local("graph", "ops", "layers"), []Violation{{"graph", "layers"}}},
		{"optim must not import layers", local("optim", "graph", "layers"), []Violation{{"optim", "layers"}}},
		{"data must not import the trainer", local("data", "tensor", "train"), []Violation{{"data", "train"}}},
		{"a corpus reader imports data", local("data/cifar", "data", "tensor", "internal/readlimit"), nil},
		{"parity must not import the models", local("parity", "layers", "models/mnist"), []Violation{{"parity", "models/mnist"}}},
		{"a model must not import another", local("models/srl", "layers", "models/mnist"), []Violation{{"models/srl", "models/mnist"}}},
		{"testify only in tests", local("layers", "github.com/stretchr/testify/require"), []Violation{{"layers", "github.com/stretchr/testify/require"}}},
		{"the command imports anything", local("cmd/plumb", "models/mnist", "parity", "train"), nil},
		{"a package no rule covers", local("newpkg", "tensor"), []Violation{{Pkg: "newpkg"}}},
		{"third-party packages are not checked", Package{Path: "gorgonia.org/tensor", Imports: []Import{{Path: "x.org/y"}}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, Check(Rules, []Package{c.pkg}))
		})
	}
}

func TestMatch(t *testing.T) {
	assert.True(t, match("data/...", "data"))
	assert.True(t, match("data/...", "data/cifar"))
	assert.False(t, match("data/...", "dataset"))
	assert.True(t, match("", ""))
	assert.False(t, match("", "tensor"))
}
