package infer_test

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/infer"
	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// The dynamic int8 plans of the text CNN, the stacked LSTM and the
// translation encoder give the float32 plan's outputs on random id
// sequences other than the traced ones: cosine similarity at least 0.99
// and a largest error at most 5% of the largest output. Each quantizes
// the layers listed (the LSTM's input projections, linear and
// linear_concat, and the classifiers; the encoder's final-state linear),
// as Explain says.
func TestDynamicMatchesFloat(t *testing.T) {
	want := map[string][]string{
		"sentiment_cnn":     {"sequence_conv_pool_max_0", "sequence_conv_pool_max_1", "linear_0"},
		"sentiment_lstm":    {"linear_0", "linear_concat_0", "linear_concat_1", "linear_concat_2"},
		"translate_encoder": {"linear_0"},
	}
	for _, m := range bookModels(t, 16)[1:] {
		t.Run(m.name, func(t *testing.T) {
			g, err := infer.Trace(m.forward, m.inputs(1)...)
			require.NoError(t, err)
			layers, err := infer.DynamicLayers(g, nil)
			require.NoError(t, err)
			require.Equal(t, want[m.name], layers)
			pf, err := g.Compile(infer.Options{})
			require.NoError(t, err)
			pq, err := g.Compile(infer.Options{Dynamic: &infer.DynamicQuant{}})
			require.NoError(t, err)
			var ex bytes.Buffer
			require.NoError(t, pq.Explain(&ex))
			require.Contains(t, ex.String(), "linear layers dynamically quantized to int8")
			require.Contains(t, ex.String(), "_dynamic_int8")
			for seed := uint64(2); seed < 5; seed++ {
				in := m.inputs(seed)
				yf, err := pf.Forward(in...)
				require.NoError(t, err)
				yq, err := pq.Forward(in...)
				require.NoError(t, err)
				cos, rel := cosineAndMax(yq[0].Float32s(), yf[0].Float32s())
				t.Logf("seed %d: cosine %.6f, max error %.4f of the largest output", seed, cos, rel)
				require.GreaterOrEqual(t, cos, 0.99)
				require.LessOrEqual(t, rel, 0.05)
			}
		})
	}
}

// refDynamicLinear is the plain reference of a dynamically quantized
// linear layer: x quantized per tensor as ONNX DynamicQuantizeLinear
// says, W per column into [-63, 63], the integer products summed exactly,
// then scaled and biased.
func refDynamicLinear(m, k, n int, x, w, bias []float32) []float32 {
	var lo, hi float64
	for _, v := range x {
		lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
	}
	sx := float32(hi-lo) / 255
	if sx == 0 {
		sx = 1
	}
	zp := math.Min(math.Max(math.RoundToEven(float64(-float32(lo)/sx)), 0), 255)
	qx := make([]int64, len(x))
	for i, v := range x {
		qx[i] = int64(math.Min(math.Max(math.RoundToEven(float64(v/sx))+zp, 0), 255)) - int64(zp)
	}
	sw := make([]float32, n)
	for j := range n {
		for p := range k {
			sw[j] = max(sw[j], float32(math.Abs(float64(w[p*n+j]))))
		}
		sw[j] /= 63
		if sw[j] == 0 {
			sw[j] = 1
		}
	}
	y := make([]float32, m*n)
	for i := range m {
		for j := range n {
			var acc int64
			for p := range k {
				acc += qx[i*k+p] * int64(math.RoundToEven(float64(w[p*n+j]/sw[j])))
			}
			y[i*n+j] = sx * sw[j] * float32(acc)
			if bias != nil {
				y[i*n+j] += bias[j]
			}
		}
	}
	return y
}

// One linear or linear_concat layer, on odd shapes (rows, widths and
// batch axes that fill no tile), with and without bias, gives the plain
// reference's result within float32 rounding of the epilogue (1e-5 of the
// largest output), and the float layer's within 3% of its largest output.
func TestDynamicLinearMatchesReference(t *testing.T) {
	cases := []struct {
		name   string
		lead   []int
		ka, kb int
		n      int
		bias   bool
	}{
		{"linear 1x1", []int{1}, 1, 0, 1, false},
		{"linear 7x13x5", []int{7}, 13, 0, 5, true},
		{"linear 3x5x33x17", []int{3, 5}, 33, 0, 17, true},
		{"linear 65x100x31", []int{65}, 100, 0, 31, false},
		{"concat 9x(7+11)x19", []int{9}, 7, 11, 19, true},
		{"concat 2x3x(1+30)x3", []int{2, 3}, 1, 30, 3, false},
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := tensor.NewRNG(uint64(10 + ci))
			k := c.ka + c.kb
			w, err := tensor.RandNormal(rng, tensor.Float32, 0, 1, k, c.n)
			require.NoError(t, err)
			a, err := tensor.RandNormal(rng, tensor.Float32, 0.3, 2, append(append([]int{}, c.lead...), c.ka)...)
			require.NoError(t, err)
			bld := infer.NewBuilder()
			ins := []infer.Ref{bld.Input(tensor.Float32, a.Shape()...)}
			feeds := []*tensor.Tensor{a}
			op := ops.LinearOp()
			if c.kb > 0 {
				bt, err := tensor.RandNormal(rng, tensor.Float32, -0.5, 1, append(append([]int{}, c.lead...), c.kb)...)
				require.NoError(t, err)
				ins, feeds, op = append(ins, bld.Input(tensor.Float32, bt.Shape()...)), append(feeds, bt), ops.LinearConcatOp()
			}
			args := append(append([]infer.Ref{}, ins...), bld.Const(w))
			var bias []float32
			if c.bias {
				bv, err := tensor.RandNormal(rng, tensor.Float32, 0, 1, c.n)
				require.NoError(t, err)
				bias = bv.Float32s()
				args = append(args, bld.Const(bv))
			}
			g, err := bld.Graph(bld.Op(op, args...))
			require.NoError(t, err)
			pf, err := g.Compile(infer.Options{})
			require.NoError(t, err)
			pq, err := g.Compile(infer.Options{Dynamic: &infer.DynamicQuant{}})
			require.NoError(t, err)
			yf, err := pf.Forward(feeds...)
			require.NoError(t, err)
			yq, err := pq.Forward(feeds...)
			require.NoError(t, err)

			m := tensor.Shape(c.lead).Size()
			x := make([]float32, 0, m*k)
			for i := range m {
				x = append(x, feeds[0].Float32s()[i*c.ka:(i+1)*c.ka]...)
				if c.kb > 0 {
					x = append(x, feeds[1].Float32s()[i*c.kb:(i+1)*c.kb]...)
				}
			}
			ref := refDynamicLinear(m, k, c.n, x, w.Float32s(), bias)
			_, relRef := cosineAndMax(yq[0].Float32s(), ref)
			require.LessOrEqual(t, relRef, 1e-5, "against the plain int8 reference")
			cos, relF := cosineAndMax(yq[0].Float32s(), yf[0].Float32s())
			require.LessOrEqual(t, relF, 0.03, "against float32")
			require.GreaterOrEqual(t, cos, 0.999)
		})
	}
}

// The skip list keeps the named layers in float32: skipping all of them
// gives the float plan's outputs exactly, and a name of no layer is an
// error that lists the layers there are.
func TestDynamicSkip(t *testing.T) {
	m := bookModels(t, 4)[2] // the stacked LSTM
	g, err := infer.Trace(m.forward, m.inputs(1)...)
	require.NoError(t, err)
	pf, err := g.Compile(infer.Options{})
	require.NoError(t, err)
	all, err := infer.DynamicLayers(g, nil)
	require.NoError(t, err)
	pq, err := g.Compile(infer.Options{Dynamic: &infer.DynamicQuant{Skip: all}})
	require.NoError(t, err)
	in := m.inputs(7)
	yf, err := pf.Forward(in...)
	require.NoError(t, err)
	yq, err := pq.Forward(in...)
	require.NoError(t, err)
	require.Equal(t, yf[0].Float32s(), yq[0].Float32s())

	one, err := g.Compile(infer.Options{Dynamic: &infer.DynamicQuant{Skip: all[1:]}})
	require.NoError(t, err)
	var ex bytes.Buffer
	require.NoError(t, one.Explain(&ex))
	require.Contains(t, ex.String(), "linear layers dynamically quantized to int8: 1")

	_, err = g.Compile(infer.Options{Dynamic: &infer.DynamicQuant{Skip: []string{"fc9"}}})
	require.ErrorContains(t, err, `skip list names "fc9", which is no quantizable layer (have linear_0, linear_concat_0`)
}

// The dynamic int8 sequence_conv_pool_max, on odd widths, context
// windows before, around and after each step, and a batch with an empty
// and a one-step sequence, gives the plain reference (the zero-padded
// windows as rows, refDynamicLinear, then each sequence's maximum; an
// empty sequence gives zeros) within float32 rounding, and the float op
// within 3% of its largest output.
func TestDynamicSeqConvPoolMatchesReference(t *testing.T) {
	cases := []struct {
		lengths       []int
		d, n          int
		start, length int
	}{
		{[]int{5, 0, 1, 9}, 7, 5, -1, 3},
		{[]int{3, 11}, 13, 17, -3, 4},
		{[]int{1, 2, 30}, 1, 1, 0, 1},
		{[]int{8, 4}, 33, 9, 0, 2},
	}
	for ci, c := range cases {
		rng := tensor.NewRNG(uint64(40 + ci))
		off := offsets(c.lengths)
		total := off[len(off)-1]
		x, err := tensor.RandNormal(rng, tensor.Float32, 0.1, 1, total, c.d)
		require.NoError(t, err)
		w, err := tensor.RandNormal(rng, tensor.Float32, 0, 0.5, c.length*c.d, c.n)
		require.NoError(t, err)
		bld := infer.NewBuilder()
		in := bld.Input(tensor.Float32, total, c.d)
		g, err := bld.Graph(bld.Op(ops.SequenceConvPoolMaxOp(off, c.start, c.length), in, bld.Const(w)))
		require.NoError(t, err)
		pf, err := g.Compile(infer.Options{})
		require.NoError(t, err)
		pq, err := g.Compile(infer.Options{Dynamic: &infer.DynamicQuant{}})
		require.NoError(t, err)
		yf, err := pf.Forward(x)
		require.NoError(t, err)
		yq, err := pq.Forward(x)
		require.NoError(t, err)

		k := c.length * c.d
		win := make([]float32, total*k)
		xs := x.Float32s()
		for b := range len(c.lengths) {
			for tt := off[b]; tt < off[b+1]; tt++ {
				for j := range c.length {
					if src := tt + c.start + j; src >= off[b] && src < off[b+1] {
						copy(win[tt*k+j*c.d:], xs[src*c.d:(src+1)*c.d])
					}
				}
			}
		}
		conv := refDynamicLinear(total, k, c.n, win, w.Float32s(), nil)
		ref := make([]float32, len(c.lengths)*c.n)
		for b := range len(c.lengths) {
			for ch := range c.n {
				m := float32(0)
				for tt := off[b]; tt < off[b+1]; tt++ {
					if v := conv[tt*c.n+ch]; tt == off[b] || v > m {
						m = v
					}
				}
				ref[b*c.n+ch] = m
			}
		}
		_, rel := cosineAndMax(yq[0].Float32s(), ref)
		require.LessOrEqual(t, rel, 1e-5, "case %d against the plain int8 reference", ci)
		_, relF := cosineAndMax(yq[0].Float32s(), yf[0].Float32s())
		require.LessOrEqual(t, relF, 0.03, "case %d against float32", ci)
	}
}

// One dynamic int8 plan run from several goroutines at once gives each
// call the serial call's outputs exactly (each call takes its own
// buffers).
func TestDynamicConcurrent(t *testing.T) {
	m := bookModels(t, 6)[2] // the stacked LSTM
	g, err := infer.Trace(m.forward, m.inputs(1)...)
	require.NoError(t, err)
	p, err := g.Compile(infer.Options{Dynamic: &infer.DynamicQuant{}})
	require.NoError(t, err)
	const workers = 4
	want := make([][]float32, workers)
	for w := range workers {
		y, err := p.Forward(m.inputs(uint64(20 + w))...)
		require.NoError(t, err)
		want[w] = y[0].Float32s()
	}
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for i := range 5 {
				y, err := p.Forward(m.inputs(uint64(20 + w))...)
				if err == nil && !slices.Equal(y[0].Float32s(), want[w]) {
					err = fmt.Errorf("worker %d call %d: %v, want %v", w, i, y[0].Float32s(), want[w])
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		require.NoError(t, <-errs)
	}
}
