package ops

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/internal/gradcheck"
	"github.com/plumbml/plumb/tensor"
)

// gradCase is one float64 numeric-gradient check of an op. Each op's test
// file adds its cases with addGradCases; TestGradients builds the op from
// its name and attrs with Build, as the parity harness and the device
// tests do, and runs them all; TestEveryOpHasGradCases fails for a
// registered op whose differentiable inputs no case covers.
type gradCase struct {
	name  string
	attrs Attrs
	in    []*tensor.Tensor
	wrt   []int
}

var gradCases = map[string][]gradCase{}

func addGradCases(op string, cs ...gradCase) bool {
	gradCases[op] = append(gradCases[op], cs...)
	return true
}

// builder returns a maker of fresh ops named name with the case's
// attributes, built by Build; it fails t when Build cannot make one.
func (c gradCase) builder(t *testing.T, name string) func() Op {
	t.Helper()
	_, err := Build(name, c.attrs)
	require.NoError(t, err)
	return func() Op {
		op, _ := Build(name, c.attrs)
		return op
	}
}

func TestGradients(t *testing.T) {
	names := make([]string, 0, len(gradCases))
	for n := range gradCases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, c := range gradCases[n] {
			t.Run(n+"/"+c.name, func(t *testing.T) {
				gradcheck.CheckOp(t, c.builder(t, n), c.in, c.wrt...)
			})
		}
	}
}

func TestEveryOpHasGradCases(t *testing.T) {
	for _, s := range Registered() {
		covered := map[int]bool{}
		for _, c := range gradCases[s.Name] {
			for _, i := range c.wrt {
				covered[i] = true
			}
		}
		for _, i := range s.Grads {
			assert.Truef(t, covered[i], "op %s: no gradient case for input %d (%s)", s.Name, i, s.Inputs[i])
		}
	}
}

// randn returns a seeded float64 normal tensor.
func randn(seed uint64, shape ...int) *tensor.Tensor {
	t, err := tensor.RandNormal(tensor.NewRNG(seed), tensor.Float64, 0, 1, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// randu returns a seeded float64 tensor uniform in [lo, hi).
func randu(seed uint64, lo, hi float64, shape ...int) *tensor.Tensor {
	t, err := tensor.RandUniform(tensor.NewRNG(seed), tensor.Float64, lo, hi, shape...)
	if err != nil {
		panic(err)
	}
	return t
}

// f32 converts a float64 tensor to float32.
func f32(t *tensor.Tensor) *tensor.Tensor {
	c, err := t.Cast(tensor.Float32)
	if err != nil {
		panic(err)
	}
	return c
}

// ins is shorthand for an input list.
func ins(ts ...*tensor.Tensor) []*tensor.Tensor { return ts }

// requireClose checks got against want elementwise within atol + rtol·|want|.
func requireClose(t *testing.T, want, got *tensor.Tensor, atol, rtol float64) {
	t.Helper()
	require.Equal(t, want.Shape(), got.Shape(), "shape")
	for i := range want.Size() {
		w, g := want.At(i), got.At(i)
		d := w - g
		if d < 0 {
			d = -d
		}
		aw := w
		if aw < 0 {
			aw = -aw
		}
		require.LessOrEqualf(t, d, atol+rtol*aw, "element %d: want %v, got %v", i, w, g)
	}
}

// checkDTypes runs the op in float64 and float32 on the same values and
// requires the float32 result to match within float32 round-off.
func checkDTypes(t *testing.T, mk func() Op, in ...*tensor.Tensor) {
	t.Helper()
	want, err := mk().Forward(in)
	require.NoError(t, err)
	in32 := make([]*tensor.Tensor, len(in))
	for i, x := range in {
		in32[i] = x
		if x.DType() == tensor.Float64 {
			in32[i] = f32(x)
		}
	}
	got, err := mk().Forward(in32)
	require.NoError(t, err)
	require.Equal(t, tensor.Float32, got.DType())
	requireClose(t, want, got, 1e-5, 1e-4)
}
