package plumb_test

import (
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The root package doc describes the library as it is: every top-level
// package, every book chapter under models/, the layer families and every
// corpus reader under data/.
func TestRootDocIsCurrent(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	doc := f.Doc.Text()
	var want []string
	for _, dir := range []string{".", "models", "data"} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() || strings.HasPrefix(name, ".") || name == "internal" || name == "testdata" {
				continue
			}
			want = append(want, name)
		}
	}
	want = append(want, "LSTM", "GRU", "attention", "CRF", "beam search", "TensorBoard", "metadata")
	for _, w := range want {
		require.Contains(t, strings.ToLower(doc), strings.ToLower(w), "the root package doc mentions %s", w)
	}
}
