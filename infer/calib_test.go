package infer

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

func histOf(x []float32, bins int) ([]float64, float32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	h := make([]float64, bins)
	histogramAbs(x, amax, h)
	return h, amax
}

// The percentile and KL thresholds on distributions whose answer is
// known: a uniform |x| keeps (nearly) all of its range under both; a
// Gaussian with one far outlier is clipped by both far below the
// outlier (the 99.9th percentile near 3.29σ); KL clips a long tail and
// keeps a short one.
func TestCalibrationThresholds(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 3))
	uniform := make([]float32, 200000)
	for i := range uniform {
		uniform[i] = rng.Float32()
	}
	h, amax := histOf(uniform, 2048)
	require.InDelta(t, 0.99, percentileThreshold(h, amax, 99), 0.002)
	require.InDelta(t, 1, percentileThreshold(h, amax, 100), 1e-5)
	require.Greater(t, klThreshold(h, amax, 255), float32(0.95), "a uniform distribution loses to any clipping")

	gauss := make([]float32, 200000)
	for i := range gauss {
		gauss[i] = float32(rng.NormFloat64())
	}
	gauss[0] = 100 // one outlier
	h, amax = histOf(gauss, 2048)
	require.Equal(t, float32(100), amax)
	p := percentileThreshold(h, amax, 99.9)
	require.InDelta(t, 3.29, p, 0.1)
	kl := klThreshold(h, amax, 128)
	// Paddle's search starts at half the bins, so the outlier bounds it
	// below at half the range (bin 1023 of 2048); minmax would keep all 100.
	require.Less(t, kl, float32(60))
	require.GreaterOrEqual(t, kl, float32(49.9))

	// A Laplace distribution's long tail (max near ln(200000) ≈ 12) is
	// clipped well inside the range; a Gaussian's (max near 4.5σ) is kept.
	lap := make([]float32, 200000)
	for i := range lap {
		lap[i] = float32(rng.ExpFloat64())
		if i%2 == 0 {
			lap[i] = -lap[i]
		}
	}
	h, amax = histOf(lap, 2048)
	kl = klThreshold(h, amax, 128)
	require.Less(t, kl, 0.9*amax)
	require.Greater(t, kl, float32(5))
	gauss[0] = 0
	h, amax = histOf(gauss, 2048)
	require.Equal(t, amax, klThreshold(h, amax, 128))
}

// Calibrate's min-max is the exact range of what the tensors took over
// all batches; the ReLU's output range starts at 0; percentile clips
// the one outlier.
func TestCalibrateRanges(t *testing.T) {
	b := NewBuilder()
	x := b.Input(tensor.Float32, 4, 5)
	relu, err := ops.Lookup("relu")
	require.True(t, relu.Make != nil && err)
	op, e := relu.Make.Make(relu.Make.Attrs())
	require.NoError(t, e)
	y := b.Op(op, x)
	g, e := b.Graph(y)
	require.NoError(t, e)
	rng := rand.New(rand.NewPCG(35, 4))
	var batches [][]*tensor.Tensor
	for range 3 {
		v := make([]float32, 20)
		for i := range v {
			v[i] = rng.Float32()*4 - 3
		}
		batches = append(batches, []*tensor.Tensor{tensor.MustFromSlice(v, 4, 5)})
	}
	batches[1][0].Float32s()[7] = 9.5
	batches[2][0].Float32s()[3] = -7.25
	c, e := Calibrate(g, batches, CalibOptions{})
	require.NoError(t, e)
	require.Equal(t, Range{-7.25, 9.5}, c.ranges[0])
	require.Equal(t, float32(0), c.ranges[1].Min)
	require.Equal(t, float32(9.5), c.ranges[1].Max)
	c, e = Calibrate(g, batches, CalibOptions{Method: CalibPercentile, Percentile: 90})
	require.NoError(t, e)
	require.Less(t, c.ranges[0].Max, float32(9.5))
	require.Greater(t, c.ranges[0].Min, float32(-7.25))
	for _, bad := range []CalibOptions{{Method: "median"}, {Percentile: 101}, {Bins: 100}} {
		_, e := Calibrate(g, batches, bad)
		require.Error(t, e)
	}
	_, e = Calibrate(g, nil, CalibOptions{})
	require.ErrorContains(t, e, "no batches")
}

// actQuantOf widens the range to hold 0 and gives 0 an exact zero point.
func TestActQuantOf(t *testing.T) {
	require.Equal(t, actQuant{Scale: 1}, actQuantOf(Range{}))
	a := actQuantOf(Range{0, 2.55})
	require.InDelta(t, 0.01, a.Scale, 1e-7)
	require.Equal(t, uint8(0), a.Zero)
	a = actQuantOf(Range{-1, 1})
	require.InDelta(t, 2.0/255, a.Scale, 1e-7)
	require.Equal(t, uint8(127), a.Zero) // 1/(2/255) is 127.49999 in float32
	a = actQuantOf(Range{1, 3})          // widened to [0, 3]
	require.Equal(t, uint8(0), a.Zero)
	require.InDelta(t, 3.0/255, a.Scale, 1e-7)
}

// The reader refuses truncated and inconsistent files without reading
// past them.
func TestQuantFileRejectsCorruptFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	header := func(js string) []byte {
		b := make([]byte, 8, 8+len(js))
		b[0] = byte(len(js))
		return append(b, js...)
	}
	meta := `"__metadata__":{"quantization":"x"}`
	for _, c := range []struct {
		file []byte
		want string
	}{
		{[]byte{1, 2, 3}, "too short"},
		{[]byte{255, 255, 255, 255, 255, 255, 255, 0, '{', '}'}, "header of"},
		{header(`{}`), "not an int8 model"},
		{header(`{` + meta + `,"w":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}}`), `dtype "F64"`},
		{append(header(`{`+meta+`,"w":{"dtype":"I8","shape":[4],"data_offsets":[0,3]}}`), 1, 2, 3, 4), "bytes [0, 3)"},
		{append(header(`{`+meta+`,"w":{"dtype":"I8","shape":[4],"data_offsets":[2,6]}}`), 1, 2, 3, 4), "bytes [2, 6)"},
		{header(`{` + meta + `,"w":{"dtype":"I8","shape":[1099511627776,1099511627776],"data_offsets":[0,0]}}`), "larger than the file"},
		{header(`{` + meta + `,"w":{"dtype":"I8","shape":[-1],"data_offsets":[0,0]}}`), "larger than the file"},
		{header(`{"__metadata__":7}`), "metadata"},
		{header(`{`), "header"},
	} {
		_, err := readQuantFile(write("f", c.file))
		require.ErrorContains(t, err, c.want, "%q", c.file)
	}
}

// parseQuantFile on arbitrary bytes returns a file or an error, never
// panics, and every tensor it accepts lies inside the data with the
// bytes its dtype and shape need.
func FuzzParseQuantFile(f *testing.F) {
	hdr := func(js string) []byte {
		b := make([]byte, 8, 8+len(js))
		b[0] = byte(len(js))
		return append(b, js...)
	}
	f.Add(hdr(`{"__metadata__":{"quantization":"x"},"w":{"dtype":"I8","shape":[2,2],"data_offsets":[0,4]}}` + "    "))
	f.Add(hdr(`{"__metadata__":{"quantization":"x"},"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}`))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := parseQuantFile(b, "fuzz")
		if err != nil {
			return
		}
		for name, e := range q.entries {
			n := stSizes[e.DType]
			for _, d := range e.Shape {
				n *= d
			}
			if e.Offsets[0] < 0 || e.Offsets[1] > len(q.data) || e.Offsets[1]-e.Offsets[0] != n {
				t.Fatalf("tensor %q accepted with %+v in %d bytes", name, e, len(q.data))
			}
		}
	})
}
