package run

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/onnx"
	"github.com/plumbml/plumb/tensor"
)

// FuzzCompile decodes arbitrary bytes with small limits and compiles what
// decodes: neither step may panic. The seeds are the test models.
func FuzzCompile(f *testing.F) {
	for _, name := range []string{"mlp", "cnn", "textcnn", "shapes", "lstm", "gru_lbr1"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".onnx"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	opts := onnx.Options{MaxModelBytes: 1 << 20, MaxExternalBytes: 1 << 20}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := onnx.Decode(bytes.NewReader(b), int64(len(b)), opts)
		if err != nil {
			return
		}
		_ = Inspect(m).String()
		_, _ = Compile(m)
	})
}

// A tiny graph whose constants ask for a huge tensor (ConstantOfShape of
// [2^20, 2^10], a broadcast of a long row and column) compiles without
// allocating it: those nodes are left to run time.
func TestCompileAllocatesWhatTheFileJustifies(t *testing.T) {
	col := tensor.Zeros(tensor.Float32, 4096, 1)
	row := tensor.Zeros(tensor.Float32, 1, 4096)
	m := graphOf(17, []onnx.Value{input("x", elemFloat, 1)},
		map[string]*tensor.Tensor{"shape": ints(1<<20, 1<<10), "col": col, "row": row}, []string{"big", "outer"},
		nodeOf("huge", "ConstantOfShape", []string{"shape"}, []string{"big"}),
		nodeOf("outer", "Add", []string{"col", "row"}, []string{"outer"}),
	)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c, err := Compile(m)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "bytes allocated by Compile")
	assert.Equal(t, 2, c.Steps(), "both nodes run at run time")
}

// Sizes whose product overflows int saturate instead of wrapping round to
// a small number that would pass the folding and allocation checks.
func TestSizeSaturates(t *testing.T) {
	assert.Equal(t, 24, size([]int{2, 3, 4}))
	assert.Equal(t, 0, size([]int{1 << 40, 0, 1 << 40}))
	assert.Equal(t, math.MaxInt, size([]int{1 << 31, 1 << 31, 1 << 31}))
	m := graphOf(13, []onnx.Value{input("x", elemFloat, 1)},
		map[string]*tensor.Tensor{"v": tensor.Zeros(tensor.Float32, 1, 1, 1), "reps": ints(1<<31, 1<<31, 1<<31)}, []string{"y"},
		nodeOf("tile", "Tile", []string{"v", "reps"}, []string{"y"}))
	c, err := Compile(m)
	require.NoError(t, err)
	assert.Equal(t, 1, c.Steps(), "the huge tile is not folded")
	_, err = c.Run(map[string]*tensor.Tensor{"x": tensor.Zeros(tensor.Float32, 1)})
	assert.ErrorContains(t, err, `node 0 "tile" (Tile, opset 13): output shape`)
}
