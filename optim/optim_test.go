package optim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// x0 and steps are the tiny problem every rule's 3-step test runs: a
// two-element parameter starting at x0, given the gradients of steps in turn.
var (
	x0    = []float64{1, -2}
	steps = [][]float64{{0.5, -1}, {0.1, 0.3}, {-0.2, 0.4}}
)

func param[T tensor.Float](name string, vals ...float64) *graph.Param {
	d := make([]T, len(vals))
	for i, v := range vals {
		d[i] = T(v)
	}
	return graph.NewParam(name, tensor.MustFromSlice(d))
}

func grad[T tensor.Float](p *graph.Param, vals ...float64) {
	g := param[T]("", vals...)
	p.Grad = g.Value
}

func values(t *tensor.Tensor) []float64 {
	out := make([]float64, t.Size())
	for i := range out {
		out[i] = t.At(i)
	}
	return out
}

type newFunc func([]*graph.Param, ...Option) (Optimizer, error)

// TestThreeSteps checks each rule against the values after each of three
// steps, computed by hand from the TF formulas in each constructor's doc
// (with a plain float64 script, not this package).
func TestThreeSteps(t *testing.T) {
	cases := []struct {
		name string
		opt  newFunc
		opts []Option
		want [3][2]float64
	}{
		{"SGD", NewSGD, []Option{LR(0.1)}, [3][2]float64{
			{0.95, -1.9},
			{0.94, -1.93},
			{0.96, -1.97},
		}},
		{"Momentum", NewMomentum, []Option{LR(0.1), Momentum(0.9)}, [3][2]float64{
			{0.95, -1.9},
			{0.895, -1.84},
			{0.8655, -1.826},
		}},
		{"Nesterov", NewMomentum, []Option{LR(0.1), Momentum(0.9), Nesterov()}, [3][2]float64{
			{0.905, -1.81},
			{0.8455, -1.786},
			{0.83895, -1.8134},
		}},
		{"Adam", NewAdam, []Option{LR(0.1)}, [3][2]float64{
			{0.9000006324515321, -1.900000316226766},
			{0.819697032869824, -1.8572155867270155},
			{0.7852618562120453, -1.8492097053133019},
		}},
		{"AdamW", NewAdamW, []Option{LR(0.1), WeightDecay(0.1)}, [3][2]float64{
			{0.890000632451532, -1.880000316226766},
			{0.8007970265453086, -1.8184155835647478},
			{0.7583538796220768, -1.7922255463153867},
		}},
		{"RMSProp", NewRMSProp, []Option{LR(0.1)}, [3][2]float64{
			{0.6837728664367966, -1.6837723920969265},
			{0.6185401979242164, -1.779118602866846},
			{0.74465327942652, -1.9025024838636613},
		}},
		{"RMSProp momentum centered", NewRMSProp, []Option{LR(0.1), Momentum(0.5), Centered()}, [3][2]float64{
			{0.6666674074049382, -1.6666668518516974},
			{0.4301156259862631, -1.597128813107345},
			{0.44019302256838383, -1.6858588845063698},
		}},
		{"Adagrad", NewAdagrad, []Option{LR(0.1)}, [3][2]float64{
			{0.9154845866007779, -1.9046537454093613},
			{0.8988179222489255, -1.9321546991647054},
			{0.930440694897763, -1.966581216522604},
		}},
	}
	for _, c := range cases {
		t.Run(c.name+"/float64", func(t *testing.T) { threeSteps[float64](t, c.opt, c.opts, c.want, 1e-12) })
		t.Run(c.name+"/float32", func(t *testing.T) { threeSteps[float32](t, c.opt, c.opts, c.want, 2e-6) })
	}
}

func threeSteps[T tensor.Float](t *testing.T, newOpt newFunc, opts []Option, want [3][2]float64, tol float64) {
	p := param[T]("w", x0...)
	opt, err := newOpt([]*graph.Param{p}, opts...)
	require.NoError(t, err)
	for i, g := range steps {
		grad[T](p, g...)
		require.NoError(t, opt.Step())
		assert.InDeltaSlice(t, want[i][:], values(p.Value), tol, "after step %d", i+1)
	}
	it := opt.State()[len(opt.State())-1]
	assert.Equal(t, "iterations", it.Name)
	assert.Equal(t, int64(3), it.Value.Int64s()[0])
}

// TestConvergence minimises the quadratic sum((x - target)²) from a fixed
// random start with each rule.
func TestConvergence(t *testing.T) {
	cases := []struct {
		name  string
		opt   newFunc
		opts  []Option
		steps int
	}{
		{"SGD", NewSGD, []Option{LR(0.1)}, 200},
		{"Momentum", NewMomentum, []Option{LR(0.05)}, 300},
		{"Nesterov", NewMomentum, []Option{LR(0.05), Nesterov()}, 300},
		{"Adam", NewAdam, []Option{LR(0.05)}, 1000},
		{"AdamW", NewAdamW, []Option{LR(0.05), WeightDecay(1e-4)}, 1000},
		{"RMSProp", NewRMSProp, []Option{LR(0.01)}, 1000},
		{"RMSProp momentum centered", NewRMSProp, []Option{LR(0.01), Momentum(0.5), Centered()}, 1000},
		{"Adagrad", NewAdagrad, []Option{LR(0.5)}, 1000},
	}
	target := []float64{0.5, -1.5, 2, 0, 3}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start, err := tensor.RandNormal(tensor.NewRNG(1), tensor.Float64, 0, 2, len(target))
			require.NoError(t, err)
			p := graph.NewParam("x", start)
			opt, err := c.opt([]*graph.Param{p}, c.opts...)
			require.NoError(t, err)
			for range c.steps {
				g := make([]float64, len(target))
				for i, x := range p.Value.Float64s() {
					g[i] = 2 * (x - target[i])
				}
				p.Grad = tensor.MustFromSlice(g)
				require.NoError(t, opt.Step())
			}
			assert.InDeltaSlice(t, target, p.Value.Float64s(), 0.02)
		})
	}
}

func TestStepZeroesGradsAndSkips(t *testing.T) {
	withGrad := param[float32]("a", 1, 2)
	noGrad := param[float32]("b", 3, 4)
	frozen := graph.NewState("c", tensor.MustFromSlice([]float32{5, 6}))
	frozen.Grad = tensor.MustFromSlice([]float32{1, 1})
	frozenLater := param[float64]("d", 7)
	frozenLater.Grad = tensor.MustFromSlice([]float64{1})
	ints := graph.NewState("steps", tensor.MustFromSlice([]int64{9}))
	opt, err := NewSGD([]*graph.Param{withGrad, noGrad, frozen, frozenLater, ints}, LR(1))
	require.NoError(t, err)
	frozenLater.Trainable = false
	grad[float32](withGrad, 0.5, 0.25)

	require.NoError(t, opt.Step())
	assert.Equal(t, []float32{0.5, 1.75}, withGrad.Value.Float32s())
	assert.Equal(t, []float32{0, 0}, withGrad.Grad.Float32s(), "grads zeroed")
	assert.Equal(t, []float32{3, 4}, noGrad.Value.Float32s())
	assert.Nil(t, noGrad.Grad)
	assert.Equal(t, []float32{5, 6}, frozen.Value.Float32s())
	assert.Equal(t, []float32{1, 1}, frozen.Grad.Float32s())
	assert.Equal(t, []float64{7}, frozenLater.Value.Float64s())
	assert.Equal(t, []float64{1}, frozenLater.Grad.Float64s())
	assert.Equal(t, []int64{9}, ints.Value.Int64s())

	// A second step with the zeroed gradient leaves the value alone.
	require.NoError(t, opt.Step())
	assert.Equal(t, []float32{0.5, 1.75}, withGrad.Value.Float32s())
}

func TestStepWithoutGradsCountsNothing(t *testing.T) {
	p := param[float64]("w", 1)
	opt, err := NewAdam([]*graph.Param{p})
	require.NoError(t, err)
	require.NoError(t, opt.Step())
	st := opt.State()
	assert.Equal(t, int64(0), st[len(st)-1].Value.Int64s()[0])
	assert.Equal(t, []float64{1}, p.Value.Float64s())
}

func TestState(t *testing.T) {
	a := param[float32]("dense/kernel", 1, 2)
	b := param[float64]("dense/bias", 3)
	s := graph.NewState("bn/mean", tensor.MustFromSlice([]float32{0}))
	opt, err := NewAdagrad([]*graph.Param{a, s, b}, InitialAccumulator(0.5))
	require.NoError(t, err)
	var names []string
	for _, p := range opt.State() {
		names = append(names, p.Name)
		assert.False(t, p.Trainable)
	}
	assert.Equal(t, []string{"dense/kernel/accumulator", "dense/bias/accumulator", "iterations"}, names)
	st := opt.State()
	assert.Equal(t, []float32{0.5, 0.5}, st[0].Value.Float32s())
	assert.Equal(t, []float64{0.5}, st[1].Value.Float64s())

	// State shares storage: writing it (as a checkpoint does) changes the
	// next step.
	st[0].Value.Fill(3)
	st[2].Value.Int64s()[0] = 7
	grad[float32](a, 1, 1)
	require.NoError(t, opt.Step())
	assert.Equal(t, []float32{4, 4}, opt.State()[0].Value.Float32s())
	assert.Equal(t, int64(8), opt.State()[2].Value.Int64s()[0])
}

func TestL2(t *testing.T) {
	p := param[float64]("w", 2, -4)
	opt, err := NewSGD([]*graph.Param{p}, LR(0.1), L2(0.5))
	require.NoError(t, err)
	grad[float64](p, 1, 1)
	require.NoError(t, opt.Step())
	// g + l2*var = {1 + 1, 1 - 2} = {2, -1}
	assert.InDeltaSlice(t, []float64{1.8, -3.9}, p.Value.Float64s(), 1e-15)
}

func TestStepClipsGlobalNorm(t *testing.T) {
	a := param[float32]("a", 0, 0)
	b := param[float64]("b", 0)
	opt, err := NewSGD([]*graph.Param{a, b}, LR(1), GlobalClipNorm(1))
	require.NoError(t, err)
	grad[float32](a, 3, 0)
	grad[float64](b, 4) // global norm 5
	require.NoError(t, opt.Step())
	assert.InDeltaSlice(t, []float64{-0.6, 0}, values(a.Value), 1e-7)
	assert.InDeltaSlice(t, []float64{-0.8}, values(b.Value), 1e-15)
}

func TestLRSchedule(t *testing.T) {
	p := param[float64]("w", 0)
	opt, err := NewSGD([]*graph.Param{p}, LRSchedule(ScheduleFunc(func(n int64) float64 { return float64(n + 1) })))
	require.NoError(t, err)
	for range 3 {
		grad[float64](p, 1)
		require.NoError(t, opt.Step())
	}
	assert.Equal(t, []float64{-6}, p.Value.Float64s(), "lr 1, 2, 3")
}

type constructorCase struct {
	name string
	opt  newFunc
	ps   []*graph.Param
	opts []Option
	want string
}

func TestConstructorErrors(t *testing.T) {
	w := param[float32]("w", 1)
	cases := []constructorCase{
		{"negative LR", NewSGD, []*graph.Param{w}, []Option{LR(-1)}, "LR -1"},
		{"NaN LR", NewSGD, []*graph.Param{w}, []Option{LR(math.NaN())}, "LR NaN"},
		{"nil schedule", NewSGD, []*graph.Param{w}, []Option{LRSchedule(nil)}, "nil schedule"},
		{"beta1 of 1", NewAdam, []*graph.Param{w}, []Option{Beta1(1)}, "Beta1 1"},
		{"beta2 negative", NewAdam, []*graph.Param{w}, []Option{Beta2(-0.1)}, "Beta2 -0.1"},
		{"rho", NewRMSProp, []*graph.Param{w}, []Option{Rho(2)}, "Rho 2"},
		{"epsilon", NewAdagrad, []*graph.Param{w}, []Option{Epsilon(-1)}, "Epsilon -1"},
		{"momentum", NewMomentum, []*graph.Param{w}, []Option{Momentum(math.Inf(1))}, "Momentum +Inf"},
		{"accumulator", NewAdagrad, []*graph.Param{w}, []Option{InitialAccumulator(-1)}, "InitialAccumulator -1"},
		{"weight decay", NewAdamW, []*graph.Param{w}, []Option{WeightDecay(-1)}, "WeightDecay -1"},
		{"l2", NewSGD, []*graph.Param{w}, []Option{L2(-1)}, "L2 -1"},
		{"clip", NewSGD, []*graph.Param{w}, []Option{GlobalClipNorm(0)}, "GlobalClipNorm 0"},
		{"option for another rule", NewSGD, []*graph.Param{w}, []Option{Beta1(0.5)}, "SGD does not take option Beta1"},
		{"zero option", NewSGD, []*graph.Param{w}, []Option{{}}, "zero Option"},
		{"nil param", NewSGD, []*graph.Param{w, nil}, nil, "parameter 1 is nil"},
		{"no value", NewSGD, []*graph.Param{{Name: "v", Trainable: true}}, nil, `"v" has no value`},
		{"int param", NewSGD, []*graph.Param{graph.NewParam("i", tensor.MustFromSlice([]int32{1}))}, nil, `"i" is int32`},
		{"duplicate name", NewSGD, []*graph.Param{w, param[float32]("w", 2)}, nil, `two parameters are named "w"`},
	}
	// Every constructor refuses nothing to train: no parameters, or none trainable.
	frozen := graph.NewState("moving_mean", tensor.MustFromSlice([]float32{0}))
	for name, f := range map[string]newFunc{"SGD": NewSGD, "Momentum": NewMomentum, "Adam": NewAdam, "AdamW": NewAdamW,
		"RMSProp": NewRMSProp, "Adagrad": NewAdagrad} {
		cases = append(cases,
			constructorCase{"no params " + name, f, nil, nil, name + ": no trainable parameters among the 0 given"},
			constructorCase{"none trainable " + name, f, []*graph.Param{frozen}, nil, name + ": no trainable parameters among the 1 given"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt, err := c.opt(c.ps, c.opts...)
			require.Error(t, err)
			assert.Nil(t, opt)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestStepErrorsLeaveParamsAlone(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(a, b *graph.Param, opt Optimizer)
		want   string
	}{
		{"grad dtype", func(_, b *graph.Param, _ Optimizer) { b.Grad = tensor.MustFromSlice([]float32{1, 1}) }, `"b" is float64[2] but its gradient is float32[2]`},
		{"grad shape", func(_, b *graph.Param, _ Optimizer) { b.Grad = tensor.MustFromSlice([]float64{1}) }, "gradient is float64[1]"},
		{"slot shape", func(_, _ *graph.Param, opt Optimizer) { opt.State()[2].Value = tensor.Zeros(tensor.Float64, 3) }, "slot b/m is float64[3]"},
		{"value removed", func(_, b *graph.Param, _ Optimizer) { b.Value = nil }, `"b" has no value`},
		{"iterations", func(_, _ *graph.Param, opt Optimizer) { opt.State()[4].Value = tensor.Scalar[float32](1) }, "iterations state"},
		{"negative iterations", func(_, _ *graph.Param, opt Optimizer) { opt.State()[4].Value.Int64s()[0] = -1 }, "iteration count -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := param[float64]("a", 1, 2)
			b := param[float64]("b", 3, 4)
			opt, err := NewAdam([]*graph.Param{a, b})
			require.NoError(t, err)
			grad[float64](a, 1, 1)
			grad[float64](b, 1, 1)
			c.mutate(a, b, opt)
			err = opt.Step()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Equal(t, []float64{1, 2}, a.Value.Float64s())
			assert.Equal(t, []float64{1, 1}, a.Grad.Float64s())
		})
	}
}

func TestBadScheduleValue(t *testing.T) {
	p := param[float32]("w", 1)
	opt, err := NewSGD([]*graph.Param{p}, LRSchedule(ScheduleFunc(func(int64) float64 { return math.Inf(1) })))
	require.NoError(t, err)
	grad[float32](p, 1)
	err = opt.Step()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "schedule gave +Inf at step 0")
	assert.Equal(t, []float32{1}, p.Value.Float32s())
}

// A dense step allocates only its rule's per-step coefficients (the update
// closure), whatever the number of parameters: no per-parameter garbage.
func TestDenseStepAllocatesOnce(t *testing.T) {
	cases := []struct {
		name string
		opt  newFunc
	}{
		{"SGD", NewSGD}, {"Momentum", NewMomentum}, {"Adam", NewAdam}, {"AdamW", NewAdamW},
		{"RMSProp", NewRMSProp}, {"Adagrad", NewAdagrad},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := []*graph.Param{param[float32]("a", 1, 2, 3), param[float32]("b", 4), param[float64]("c", 5, 6)}
			opt, err := tc.opt(ps, LR(0.01))
			require.NoError(t, err)
			for _, p := range ps {
				grad[float32](p, make([]float64, p.Value.Size())...)
				if p.Value.DType() == tensor.Float64 {
					grad[float64](p, make([]float64, p.Value.Size())...)
				}
			}
			require.NoError(t, opt.Step())
			allocs := testing.AllocsPerRun(10, func() { require.NoError(t, opt.Step()) })
			require.LessOrEqual(t, allocs, 1.0)
		})
	}
}

// A gradient holding NaN or Inf (dense float32 or float64, or a sparse
// gradient's rows) is an error naming the step and the parameter, and no
// parameter changes, not even the finite one updated alongside it.
func TestStepRejectsNonFiniteGradients(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for _, c := range []struct {
			name string
			set  func(ok, bad *graph.Param, v float64)
			bad  *graph.Param
		}{
			{"float32", func(ok, b *graph.Param, v float64) { grad[float32](ok, 1, 1); grad[float32](b, 0, v) }, param[float32]("bad", 1, 2)},
			{"float64", func(ok, b *graph.Param, v float64) { grad[float32](ok, 1, 1); grad[float64](b, v, 0) }, param[float64]("bad", 1, 2)},
			{"sparse", func(ok, b *graph.Param, v float64) {
				grad[float32](ok, 1, 1)
				b.SparseGrad = &graph.SparseRows{Rows: []int{1}, Values: tensor.MustFromSlice([]float32{float32(v)}, 1, 1)}
			}, graph.NewParam("bad", tensor.MustFromSlice([]float32{1, 2}, 2, 1))},
		} {
			ok := param[float32]("ok", 1, 2)
			for _, mk := range []func([]*graph.Param, ...Option) (Optimizer, error){NewSGD, NewAdam} {
				opt, err := mk([]*graph.Param{ok, c.bad}, LR(0.1))
				require.NoError(t, err)
				c.set(ok, c.bad, bad)
				before := [][]float64{values(ok.Value), values(c.bad.Value)}
				err = opt.Step()
				require.ErrorContains(t, err, `step 1: the gradient of "bad" holds NaN or Inf`, c.name)
				require.Equal(t, before, [][]float64{values(ok.Value), values(c.bad.Value)}, c.name)
			}
		}
	}
	// A nil ScheduleFunc gives NaN, which Step rejects.
	p := param[float32]("p", 1)
	opt, err := NewSGD([]*graph.Param{p}, LRSchedule(ScheduleFunc(nil)))
	require.NoError(t, err)
	grad[float32](p, 1)
	require.ErrorContains(t, opt.Step(), "learning rate schedule gave NaN")
}

// ParamLR gives a parameter the step of an optimizer at lr·factor and
// leaves the others at lr, for SGD and for Adam (whose bias correction
// and slots must not change with the factor).
func TestParamLR(t *testing.T) {
	for _, mk := range []struct {
		name string
		new  newFunc
	}{{"SGD", NewSGD}, {"Adam", NewAdam}, {"AdamW", NewAdamW}} {
		t.Run(mk.name, func(t *testing.T) {
			a, b := param[float64]("a", 1, -2), param[float64]("crf/transitions", 3)
			refA, refB := param[float64]("a", 1, -2), param[float64]("crf/transitions", 3)
			opt, err := mk.new([]*graph.Param{a, b}, LR(0.1), ParamLR(map[string]float64{"crf/transitions": 1e-3}))
			require.NoError(t, err)
			optA, err := mk.new([]*graph.Param{refA}, LR(0.1))
			require.NoError(t, err)
			optB, err := mk.new([]*graph.Param{refB}, LR(0.1*1e-3))
			require.NoError(t, err)
			for step := range 3 {
				g := float64(step + 1)
				grad[float64](a, g, -g)
				grad[float64](b, 2*g)
				grad[float64](refA, g, -g)
				grad[float64](refB, 2*g)
				require.NoError(t, opt.Step())
				require.NoError(t, optA.Step())
				require.NoError(t, optB.Step())
			}
			assert.InDeltaSlice(t, refA.Value.Float64s(), a.Value.Float64s(), 1e-15)
			assert.InDeltaSlice(t, refB.Value.Float64s(), b.Value.Float64s(), 1e-15)
			assert.NotEqual(t, 3.0, b.Value.Float64s()[0], "the scaled parameter moved")
		})
	}
	w := param[float64]("w", 1)
	_, err := NewSGD([]*graph.Param{w}, ParamLR(map[string]float64{"v": 2}))
	require.ErrorContains(t, err, `optim: SGD: ParamLR names "v", which is not a trainable parameter of this optimizer`)
	_, err = NewSGD([]*graph.Param{w}, ParamLR(map[string]float64{"w": -1}))
	require.ErrorContains(t, err, "optim: SGD: ParamLR[w]")
}
