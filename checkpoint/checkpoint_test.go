package checkpoint

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// model returns a fresh set of parameters of every dtype, filled from seed.
func model(t testing.TB, seed uint64) []*graph.Param {
	rng := tensor.NewRNG(seed)
	w, err := tensor.RandNormal(rng, tensor.Float32, 0, 1, 3, 2)
	require.NoError(t, err)
	b, err := tensor.RandNormal(rng, tensor.Float64, 0, 1, 2)
	require.NoError(t, err)
	ids := []int32{int32(rng.IntN(100)), -7}
	return []*graph.Param{
		graph.NewParam("dense/kernel", w),
		graph.NewParam("dense/bias", b),
		graph.NewState("vocab/ids", tensor.MustFromSlice(ids)),
		graph.NewState("step", tensor.Scalar(int64(rng.IntN(1000)))),
		graph.NewState("empty", tensor.Zeros(tensor.Float32, 0, 4)),
	}
}

// trained returns params and an Adam optimizer that has taken two steps.
func trained(t testing.TB, seed uint64) ([]*graph.Param, optim.Optimizer) {
	ps := model(t, seed)
	opt, err := optim.NewAdam(ps)
	require.NoError(t, err)
	for range 2 {
		for _, p := range ps[:2] {
			p.Grad = p.Value.Clone()
		}
		require.NoError(t, opt.Step())
	}
	return ps, opt
}

func assertSameValues(t *testing.T, want, got []*graph.Param) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i].Name, got[i].Name)
		assert.Equal(t, want[i].Value.DType(), got[i].Value.DType(), want[i].Name)
		assert.Equal(t, want[i].Value.Shape(), got[i].Value.Shape(), want[i].Name)
		assert.Equal(t, want[i].Value.Raw(), got[i].Value.Raw(), want[i].Name)
	}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors")
	saved, savedOpt := trained(t, 1)
	require.NoError(t, Save(path, saved, savedOpt))

	ps, opt := trained(t, 2) // other values, same layout
	kernel := ps[0].Value
	require.NoError(t, Load(path, ps, opt))
	assertSameValues(t, saved, ps)
	assertSameValues(t, savedOpt.State(), opt.State())
	assert.Same(t, kernel, ps[0].Value, "loaded in place")
	assert.Equal(t, []int64{2}, opt.State()[len(opt.State())-1].Value.Int64s())

	// Loading without an optimizer ignores its state.
	fresh := model(t, 3)
	require.NoError(t, Load(path, fresh, nil))
	assertSameValues(t, saved, fresh)

	// No temporary file is left behind.
	files, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Equal(t, "model.safetensors", files[0].Name())
}

func TestReadAndFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	ps := []*graph.Param{
		graph.NewParam("a", tensor.MustFromSlice([]float32{1, -2.5}, 2, 1)),
		graph.NewState("b", tensor.Scalar(int64(-3))),
	}
	require.NoError(t, Save(path, ps, nil))
	file, err := os.ReadFile(path)
	require.NoError(t, err)

	n := binary.LittleEndian.Uint64(file)
	assert.Zero(t, (8+n)%8, "data is 8-byte aligned")
	// The checksums are CRC-32C of the data bytes below, computed by an
	// independent bitwise implementation (polynomial 0x82F63B78).
	assert.JSONEq(t, `{"a": {"dtype": "F32", "shape": [2, 1], "data_offsets": [0, 8]},
		"b": {"dtype": "I64", "shape": [], "data_offsets": [8, 16]},
		"__metadata__": {"crc32c:a": "d5bd11cb", "crc32c:b": "da1fb189"}}`, string(file[8:8+n]))
	assert.Equal(t, []byte{0, 0, 0x80, 0x3f, 0, 0, 0x20, 0xc0, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, file[8+n:],
		"little-endian 1.0f, -2.5f, int64 -3")

	got, meta, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"crc32c:a": "d5bd11cb", "crc32c:b": "da1fb189"}, meta)
	require.Len(t, got, 2)
	assert.Equal(t, []float32{1, -2.5}, got["a"].Float32s())
	assert.Equal(t, tensor.Shape{2, 1}, got["a"].Shape())
	assert.Equal(t, []int64{-3}, got["b"].Int64s())
	assert.Equal(t, tensor.Shape{}, got["b"].Shape())
}

// file builds a safetensors file from a header and data, for error cases.
func file(header string, data ...byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

func TestReadMetadataAndForeignLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "foreign.safetensors")
	// Another writer's order: data not in key order, metadata, padding.
	f := file(`{"__metadata__": {"format": "pt"}, "x": {"dtype": "I32", "shape": [1], "data_offsets": [4, 8]},`+
		`"y": {"dtype": "I32", "shape": [1], "data_offsets": [0, 4]}}   `, 2, 0, 0, 0, 1, 0, 0, 0)
	require.NoError(t, os.WriteFile(path, f, 0o644))
	got, meta, err := Read(path)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"format": "pt"}, meta)
	assert.Equal(t, []int32{1}, got["x"].Int32s())
	assert.Equal(t, []int32{2}, got["y"].Int32s())
}

func TestLoadMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	saved, opt := trained(t, 1)
	require.NoError(t, Save(path, saved, opt))

	cases := []struct {
		name   string
		params func() []*graph.Param
		opt    bool
		want   []string
	}{
		{"missing", func() []*graph.Param {
			return append(model(t, 2), graph.NewParam("extra/w", tensor.Zeros(tensor.Float32, 1)))
		}, false, []string{`tensor "extra/w" is missing`}},
		{"extra", func() []*graph.Param { return model(t, 2)[1:] }, false,
			[]string{`tensor "dense/kernel" in the file belongs to no parameter`}},
		{"shape", func() []*graph.Param {
			ps := model(t, 2)
			ps[0].Value = tensor.Zeros(tensor.Float32, 2, 3)
			return ps
		}, false, []string{`tensor "dense/kernel" is float32[3 2] in the file, want float32[2 3]`}},
		{"dtype", func() []*graph.Param {
			ps := model(t, 2)
			ps[1].Value = tensor.Zeros(tensor.Float32, 2)
			return ps
		}, false, []string{`tensor "dense/bias" is float64[2] in the file, want float32[2]`}},
		{"other optimizer state", func() []*graph.Param { return model(t, 2) }, true,
			[]string{`tensor "optimizer/dense/kernel/ms" is missing`, `"optimizer/dense/kernel/m" in the file belongs to no parameter`}},
		{"every error named", func() []*graph.Param {
			ps := model(t, 2)[1:]
			ps[0].Value = tensor.Zeros(tensor.Float64, 5)
			return ps
		}, false, []string{`"dense/kernel" in the file belongs`, `"dense/bias" is float64[2]`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := c.params()
			before := make([]*tensor.Tensor, len(ps))
			for i, p := range ps {
				before[i] = p.Value.Clone()
			}
			var o optim.Optimizer
			if c.opt {
				var err error
				o, err = optim.NewRMSProp(ps)
				require.NoError(t, err)
			}
			err := Load(path, ps, o)
			require.Error(t, err)
			for _, w := range c.want {
				assert.Contains(t, err.Error(), w)
			}
			for i, p := range ps {
				assert.Equal(t, before[i].Raw(), p.Value.Raw(), "nothing written on error: %s", p.Name)
			}
		})
	}
}

func TestLoadCorrupt(t *testing.T) {
	one := []byte{0, 0, 0x80, 0x3f}
	good := `{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}`
	cases := []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "too short"},
		{"short length", []byte{1, 0, 0}, "too short"},
		{"header past end", file(good)[:20], "exceeds"},
		{"huge header length", append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, good...), "exceeds"},
		{"not an object", file(`[1, 2]`), "not a JSON object"},
		{"bad JSON", file(`{"a": {"dtype": "F32", `, one...), "header"},
		{"trailing JSON", file(good+`{}`, one...), "after the JSON object"},
		{"duplicate", file(`{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}`, one...), `"a" appears twice`},
		{"unknown dtype", file(`{"a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}`, one...), `unsupported dtype "BF16"`},
		{"unknown field", file(`{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "x": 1}}`, one...), "unknown field"},
		{"no shape", file(`{"a": {"dtype": "F32", "data_offsets": [0, 4]}}`, one...), "no shape"},
		{"negative dim", file(`{"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}`, one...), "negative dim"},
		{"fractional dim", file(`{"a": {"dtype": "F32", "shape": [0.5], "data_offsets": [0, 4]}}`, one...), `tensor "a"`},
		{"huge shape", file(`{"a": {"dtype": "F32", "shape": [4611686018427387904, 4], "data_offsets": [0, 4]}}`, one...), "needs more than"},
		{"offsets count", file(`{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0]}}`, one...), "want [begin, end]"},
		{"offsets past data", file(`{"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}`, one...), "outside"},
		{"offsets reversed", file(`{"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}}`, one...), "outside"},
		{"size mismatch", file(`{"a": {"dtype": "F64", "shape": [1], "data_offsets": [0, 4]}}`, append(one, one...)...), "needs 8"},
		{"overlap", file(`{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}`, append(one, one...)...), "overlaps"},
		{"hole", file(`{"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}`, append(one, one...)...), "belong to no tensor"},
		{"trailing data", file(good, append(one, 1)...), "belong to no tensor"},
		{"truncated data", file(good, one[:3]...), "needs more than the 3 bytes"},
		{"bad metadata", file(`{"__metadata__": {"k": 1}}`), "__metadata__"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_"))
			require.NoError(t, os.WriteFile(path, c.file, 0o644))
			a := graph.NewParam("a", tensor.Zeros(tensor.Float32, 1))
			err := Load(path, []*graph.Param{a}, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), path)
			_, _, err = Read(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestSaveErrors(t *testing.T) {
	dir := t.TempDir()
	w := graph.NewParam("w", tensor.Zeros(tensor.Float32, 1))
	cases := []struct {
		name   string
		path   string
		params []*graph.Param
		want   string
	}{
		{"nil param", filepath.Join(dir, "a"), []*graph.Param{w, nil}, "parameter 1 is nil"},
		{"no value", filepath.Join(dir, "a"), []*graph.Param{{Name: "v"}}, `"v" has no value`},
		{"duplicate", filepath.Join(dir, "a"), []*graph.Param{w, w}, `two tensors are named "w"`},
		{"reserved", filepath.Join(dir, "a"), []*graph.Param{graph.NewParam("__metadata__", tensor.Zeros(tensor.Float32, 1))}, "reserved"},
		{"no directory", filepath.Join(dir, "missing", "a"), []*graph.Param{w}, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Save(c.path, c.params, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.NoFileExists(t, c.path)
		})
	}
	files, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, files, "no temporary files left")
}

func TestSaveReplacesAtomically(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.safetensors")
	a := graph.NewParam("a", tensor.MustFromSlice([]float64{1}))
	require.NoError(t, Save(path, []*graph.Param{a}, nil))
	a.Value.Fill(2)
	require.NoError(t, Save(path, []*graph.Param{a}, nil))
	a.Value.Fill(0)
	require.NoError(t, Load(path, []*graph.Param{a}, nil))
	assert.Equal(t, []float64{2}, a.Value.Float64s())
}

func TestLoadMissingFile(t *testing.T) {
	err := Load(filepath.Join(t.TempDir(), "none"), nil, nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
