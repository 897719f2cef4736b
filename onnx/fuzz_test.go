package onnx

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode, with external data resolved
// in testdata and small limits: no input may panic, and a model that
// decodes must summarize. The seed corpus (testdata/fuzz/FuzzDecode,
// written by make.py) holds the valid test models and corrupted copies:
// truncated, bit-flipped, huge dims, external data escaping the directory.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"mlp.onnx", "convbn.onnx", "external.onnx", "symbolic.onnx"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	opts := Options{MaxModelBytes: 1 << 20, MaxExternalBytes: 1 << 20, Dir: "testdata"}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(bytes.NewReader(b), int64(len(b)), opts)
		if err != nil {
			return
		}
		s := Inspect(m)
		_ = s.String()
		for _, in := range m.Graph.Initializers {
			if in.Tensor == nil {
				t.Fatalf("initializer %q decoded to nil", in.Name)
			}
		}
	})
}
