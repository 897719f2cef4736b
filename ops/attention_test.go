package ops

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// maskBT is a [2, 4] key mask whose second row masks keys 1 and 3.
var maskBT = tensor.MustFromSlice([]float64{1, 1, 1, 1, 1, 0, 1, 0}, 2, 4)

var _ = addGradCases("attention",
	gradCase{name: "heads_lengths_causal", attrs: Attrs{KeyLengths: []int{3, 1}, Causal: true},
		in: ins(randn(1, 2, 2, 3, 2), randn(2, 2, 2, 3, 2), randn(3, 2, 2, 3, 3)), wrt: []int{0, 1, 2}},
	gradCase{name: "mask_fully_masked", attrs: Attrs{KeyLengths: []int{0, 4}},
		in: ins(randn(4, 2, 3, 2), randn(5, 2, 4, 2), randn(6, 2, 4, 2), maskBT), wrt: []int{0, 1, 2}},
	gradCase{name: "scale", attrs: Attrs{Scale: 0.3},
		in: ins(randn(7, 1, 2, 3), randn(8, 1, 4, 3), randn(9, 1, 4, 1)), wrt: []int{0, 1, 2}},
)

var _ = addGradCases("additive_attention",
	gradCase{name: "lengths", attrs: Attrs{KeyLengths: []int{3, 0, 1}},
		in: ins(randn(11, 3, 2, 2), randn(12, 3, 3, 2), randn(13, 2), randn(14, 3, 3, 2)), wrt: []int{0, 1, 2, 3}},
	gradCase{name: "mask", attrs: Attrs{},
		in: ins(randn(15, 2, 1, 3), randn(16, 2, 4, 3), randn(17, 3), randn(18, 2, 4, 2), maskBT), wrt: []int{0, 1, 2, 3}},
)

// sliceB takes batch element b of x [B, ...] as a [1, ...] tensor.
func sliceB(t *testing.T, x *tensor.Tensor, b int) *tensor.Tensor {
	y, err := x.Slice(0, b, b+1)
	require.NoError(t, err)
	return y
}

func TestAttentionPaddedEqualsEachAlone(t *testing.T) {
	// q [B, H, Tq, d], k, v [B, H, Tk, d]; batch element b has lengths[b] keys.
	q, k, v := randn(1, 3, 2, 4, 3), randn(2, 3, 2, 5, 3), randn(3, 3, 2, 5, 2)
	lengths := []int{5, 2, 3}
	got, err := Attention(q, k, v, nil, AttentionAttrs{KeyLengths: lengths})
	require.NoError(t, err)
	for b, l := range lengths {
		kb, err := sliceB(t, k, b).Slice(2, 0, l)
		require.NoError(t, err)
		vb, err := sliceB(t, v, b).Slice(2, 0, l)
		require.NoError(t, err)
		want, err := Attention(sliceB(t, q, b), kb, vb, nil, AttentionAttrs{})
		require.NoError(t, err)
		requireClose(t, want, sliceB(t, got, b), 1e-14, 1e-12)
	}
	// The same lengths as a mask input give the same result.
	mask := tensor.Zeros(tensor.Float32, 3, 5)
	for b, l := range lengths {
		for j := 0; j < l; j++ {
			mask.SetAt(b*5+j, 1)
		}
	}
	viaMask, err := Attention(q, k, v, mask, AttentionAttrs{})
	require.NoError(t, err)
	requireClose(t, got, viaMask, 0, 0)
	checkDTypes(t, func() Op { return AttentionOp(AttentionAttrs{KeyLengths: lengths, Causal: true}) }, q, k, v)
}

func TestAttentionCausal(t *testing.T) {
	q, k, v := randn(1, 1, 4, 3), randn(2, 1, 4, 3), randn(3, 1, 4, 2)
	got, err := Attention(q, k, v, nil, AttentionAttrs{Causal: true})
	require.NoError(t, err)
	for i := 0; i < 4; i++ { // query i sees keys 0..i: the same as keys cut to i+1
		qi, _ := q.Slice(1, i, i+1)
		ki, _ := k.Slice(1, 0, i+1)
		vi, _ := v.Slice(1, 0, i+1)
		want, err := Attention(qi, ki, vi, nil, AttentionAttrs{})
		require.NoError(t, err)
		gi, _ := got.Slice(1, i, i+1)
		requireClose(t, want, gi, 1e-14, 1e-12)
	}
}

func TestAttentionMatchesFormula(t *testing.T) {
	// softmax(q·kᵀ/sqrt(d))·v, written out for one query.
	q := tensor.MustFromSlice([]float64{1, 0.5}, 1, 1, 2)
	k := tensor.MustFromSlice([]float64{1, 0, 0, 1, -1, 1}, 1, 3, 2)
	v := tensor.MustFromSlice([]float64{1, 2, 3}, 1, 3, 1)
	got, err := Attention(q, k, v, nil, AttentionAttrs{})
	require.NoError(t, err)
	s := []float64{1 / math.Sqrt2, 0.5 / math.Sqrt2, -0.5 / math.Sqrt2}
	p := plainSoftmax(s)
	require.InDelta(t, p[0]+2*p[1]+3*p[2], got.At(0), 1e-15)
}

func TestAttentionFullyMaskedRowIsZero(t *testing.T) {
	q, k, v := randn(1, 2, 3, 2), randn(2, 2, 4, 2), randn(3, 2, 4, 2)
	op := AttentionOp(AttentionAttrs{KeyLengths: []int{0, 4}})
	out, err := op.Forward(ins(q, k, v))
	require.NoError(t, err)
	for i := 0; i < 6; i++ {
		require.Zero(t, out.At(i))
	}
	g, err := op.Backward(ins(q, k, v), out, randn(4, 2, 3, 2), []bool{true, true, true})
	require.NoError(t, err)
	for _, gi := range g {
		half := gi.Size() / 2
		for i := 0; i < half; i++ {
			require.Zero(t, gi.At(i))
		}
	}
}

func TestAdditiveAttentionMatchesFormula(t *testing.T) {
	q, k, v, val := randn(1, 2, 3, 4), randn(2, 2, 5, 4), randn(3, 4), randn(4, 2, 5, 3)
	lengths := []int{5, 2}
	got, err := AdditiveAttention(q, k, v, val, nil, AttentionAttrs{KeyLengths: lengths})
	require.NoError(t, err)
	want := tensor.Zeros(tensor.Float64, 2, 3, 3)
	for b, l := range lengths {
		for i := 0; i < 3; i++ {
			s := make([]float64, l)
			for j := range s {
				for a := 0; a < 4; a++ {
					s[j] += v.At(a) * math.Tanh(q.At((b*3+i)*4+a)+k.At((b*5+j)*4+a))
				}
			}
			for j, p := range plainSoftmax(s) {
				for c := 0; c < 3; c++ {
					want.Float64s()[(b*3+i)*3+c] += p * val.At((b*5+j)*3+c)
				}
			}
		}
	}
	requireClose(t, want, got, 1e-14, 1e-12)
	checkDTypes(t, func() Op { return AdditiveAttentionOp(AttentionAttrs{KeyLengths: lengths}) }, q, k, v, val)
}

// The inference variant computes what the training op computes, bit for
// bit, in both dtypes, with and without key lengths, and refuses Backward.
func TestAdditiveAttentionInference(t *testing.T) {
	q, k, v, val := randn(1, 3, 2, 5), randn(2, 3, 7, 5), randn(3, 5), randn(4, 3, 7, 3)
	for _, lengths := range [][]int{nil, {7, 1, 4}} {
		for _, conv := range []func(*tensor.Tensor) *tensor.Tensor{func(x *tensor.Tensor) *tensor.Tensor { return x }, f32} {
			in := ins(conv(q), conv(k), conv(v), conv(val))
			a := AttentionAttrs{KeyLengths: lengths}
			want, err := AdditiveAttentionOp(a).Forward(in)
			require.NoError(t, err)
			op := AdditiveAttentionInferenceOp(a)
			got, err := op.Forward(in)
			require.NoError(t, err)
			require.Equal(t, want.Shape(), got.Shape())
			for i := range want.Size() {
				require.Equal(t, want.At(i), got.At(i), "element %d", i)
			}
			_, err = op.Backward(in, got, tensor.ZerosLike(got), []bool{true, true, true, true})
			require.ErrorContains(t, err, "inference")
		}
	}
}

func TestAttentionErrors(t *testing.T) {
	q, k, v := randn(1, 2, 3, 4), randn(2, 2, 5, 4), randn(3, 2, 5, 2)
	for _, tc := range []struct {
		name   string
		in     []*tensor.Tensor
		a      AttentionAttrs
		substr string
	}{
		{"length beyond T", ins(q, k, v), AttentionAttrs{KeyLengths: []int{2, 6}}, "attention: inputs float64[2 3 4], float64[2 5 4], float64[2 5 2]: key length 6 of batch element 1 outside [0, 5]"},
		{"negative length", ins(q, k, v), AttentionAttrs{KeyLengths: []int{-1, 2}}, "key length -1 of batch element 0"},
		{"lengths count", ins(q, k, v), AttentionAttrs{KeyLengths: []int{2}}, "1 key lengths for a batch of 2"},
		{"mask shape", ins(q, k, v, maskBT), AttentionAttrs{}, "want mask [2 5]"},
		{"d differs", ins(q, randn(2, 2, 5, 3), v), AttentionAttrs{}, "want q [B, H, Tq, d]"},
		{"tk differs", ins(q, k, randn(3, 2, 4, 2)), AttentionAttrs{}, "want q [B, H, Tq, d]"},
		{"rank", ins(randn(1, 3, 4), randn(2, 5, 4), randn(3, 5, 2)), AttentionAttrs{}, "want q [B, H, Tq, d]"},
		{"dtype", ins(q, f32(k), v), AttentionAttrs{}, "want float32 or float64 q, k, v"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AttentionOp(tc.a).Forward(tc.in)
			require.ErrorContains(t, err, "attention: inputs")
			require.ErrorContains(t, err, tc.substr)
		})
	}
	_, err := AdditiveAttention(randn(1, 2, 1, 4), randn(2, 2, 5, 4), randn(3, 3), randn(4, 2, 5, 2), nil, AttentionAttrs{})
	require.ErrorContains(t, err, "additive_attention: inputs float64[2 1 4], float64[2 5 4], float64[3], float64[2 5 2]: want q [B, Tq, A]")
	_, err = AdditiveAttention(randn(1, 2, 1, 4), randn(2, 2, 5, 4), randn(3, 4), randn(4, 2, 5, 2), nil, AttentionAttrs{KeyLengths: []int{1, 7}})
	require.ErrorContains(t, err, "key length 7 of batch element 1 outside [0, 5]")
}

// Additive attention runs its batch elements as tasks over the cores; its
// forward and backward give the bits they give on one core (each element
// writes its own rows, and the scale vector's gradient is summed over the
// elements in order).
func TestAdditiveAttentionOverCoresMatchOneCore(t *testing.T) {
	q, k, v, val, gout := randn(11, 24, 3, 16), randn(12, 24, 9, 16), randn(13, 16), randn(14, 24, 9, 8), randn(15, 24, 3, 8)
	lengths := make([]int, 24)
	for i := range lengths {
		lengths[i] = 1 + i%9
	}
	for _, conv := range []func(*tensor.Tensor) *tensor.Tensor{func(x *tensor.Tensor) *tensor.Tensor { return x }, f32} {
		in := ins(conv(q), conv(k), conv(v), conv(val))
		run := func(procs int) []*tensor.Tensor {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			op := AdditiveAttentionOp(AttentionAttrs{KeyLengths: lengths})
			out, err := op.Forward(in)
			require.NoError(t, err)
			g, err := op.Backward(in, out, conv(gout), []bool{true, true, true, true})
			require.NoError(t, err)
			return append([]*tensor.Tensor{out}, g...)
		}
		one, many := run(1), run(4)
		for i := range one {
			require.Equal(t, one[i].Raw(), many[i].Raw(), "%v output %d", in[0].DType(), i)
		}
	}
}

// Attention over inputs near float32's largest value (±1e38) is finite
// where softmax of such values is: the scores q·k overflowed float32 to
// ±Inf and the kernels' max subtraction gave Inf − Inf = NaN. Self-attention
// of ±c with d = 1 gives each query the mean of the keys of its own sign,
// c itself; float64 inputs whose scores overflow float64 (±1e200) likewise.
// Wider inputs give the float64 kernels' result, rounded, and finite
// gradients.
func TestAttentionHugeInputsFinite(t *testing.T) {
	x32 := tensor.MustFromSlice([]float32{1e38, -1e38, 1e38, -1e38}, 1, 4, 1)
	x64 := tensor.MustFromSlice([]float64{1e200, -1e200, 1e200, -1e200}, 1, 4, 1)
	for _, x := range []*tensor.Tensor{x32, x64} {
		sm, err := Softmax(x, 1)
		require.NoError(t, err)
		requireFinite(t, sm)
		op := AttentionOp(AttentionAttrs{})
		out, err := op.Forward(ins(x, x, x))
		require.NoError(t, err)
		require.Equal(t, values(x), values(out), "%v: each query takes the keys of its sign", x.DType())
		g, err := op.Backward(ins(x, x, x), out, ones(t, out), []bool{true, true, true})
		require.NoError(t, err)
		for _, gi := range g {
			requireFinite(t, gi)
		}
	}

	r := rand.New(rand.NewPCG(38, 1))
	v := make([]float32, 2*3*6*8)
	for i := range v {
		v[i] = float32(r.Float64()*2-1) * 1e38
	}
	x := tensor.MustFromSlice(v, 2, 3, 6, 8)
	op := AttentionOp(AttentionAttrs{Causal: true})
	out, err := op.Forward(ins(x, x, x))
	require.NoError(t, err)
	requireFinite(t, out)
	x64w, err := x.Cast(tensor.Float64)
	require.NoError(t, err)
	want, err := Attention(x64w, x64w, x64w, nil, AttentionAttrs{Causal: true})
	require.NoError(t, err)
	want32, err := want.Cast(tensor.Float32)
	require.NoError(t, err)
	require.Equal(t, want32.Float32s(), out.Float32s())
	g, err := op.Backward(ins(x, x, x), out, ones(t, out), []bool{true, true, true})
	require.NoError(t, err)
	for _, gi := range g {
		requireFinite(t, gi)
	}
}

// requireFinite fails unless every element of x is finite.
func requireFinite(t *testing.T, x *tensor.Tensor) {
	t.Helper()
	for i, v := range values(x) {
		require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "element %d of %v is %v", i, x.Shape(), v)
	}
}

// ones returns a tensor of ones of x's dtype and shape.
func ones(t *testing.T, x *tensor.Tensor) *tensor.Tensor {
	o, err := tensor.Ones(x.DType(), x.Shape()...)
	require.NoError(t, err)
	return o
}
