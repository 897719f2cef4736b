package optim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func must(t *testing.T) func(Schedule, error) Schedule {
	return func(s Schedule, err error) Schedule {
		t.Helper()
		require.NoError(t, err)
		return s
	}
}

func TestSchedules(t *testing.T) {
	m := must(t)
	cosine := m(CosineDecay(1, 100, 0.1))
	cases := []struct {
		name string
		s    Schedule
		want map[int64]float64
	}{
		{"Constant", m(Constant(0.3)), map[int64]float64{0: 0.3, 1000: 0.3}},
		{"PiecewiseConstant", m(PiecewiseConstant([]int64{10, 20}, []float64{1, 0.5, 0.1})),
			map[int64]float64{0: 1, 10: 1, 11: 0.5, 20: 0.5, 21: 0.1, 100: 0.1}},
		{"ExponentialDecay", m(ExponentialDecay(0.1, 10, 0.5, false)),
			map[int64]float64{0: 0.1, 5: 0.07071067811865475, 10: 0.05, 25: 0.017677669529663688}},
		{"ExponentialDecay staircase", m(ExponentialDecay(0.1, 10, 0.5, true)),
			map[int64]float64{0: 0.1, 5: 0.1, 9: 0.1, 10: 0.05, 25: 0.025}},
		{"CosineDecay", cosine,
			map[int64]float64{0: 1, 25: 0.8681980515339464, 50: 0.55, 100: 0.1, 200: 0.1}},
		{"Warmup constant", m(Warmup(m(Constant(1)), 4, 0)),
			map[int64]float64{0: 0, 1: 0.25, 2: 0.5, 3: 0.75, 4: 1, 10: 1}},
		{"Warmup cosine", m(Warmup(cosine, 10, 0.1)),
			map[int64]float64{0: 0.1, 5: 0.55, 10: 1, 60: 0.55, 110: 0.1}},
		{"ScheduleFunc", ScheduleFunc(func(n int64) float64 { return 1 / float64(n+1) }),
			map[int64]float64{0: 1, 3: 0.25}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for step, want := range c.want {
				assert.InDelta(t, want, c.s.LR(step), 1e-15, "step %d", step)
			}
		})
	}
}

func TestScheduleErrors(t *testing.T) {
	cases := []struct {
		name string
		make func() (Schedule, error)
		want string
	}{
		{"constant negative", func() (Schedule, error) { return Constant(-1) }, "Constant -1"},
		{"piecewise counts", func() (Schedule, error) { return PiecewiseConstant([]int64{1}, []float64{1}) }, "1 boundaries need 2 values"},
		{"piecewise order", func() (Schedule, error) { return PiecewiseConstant([]int64{5, 5}, []float64{1, 2, 3}) }, "do not increase"},
		{"piecewise value", func() (Schedule, error) { return PiecewiseConstant(nil, []float64{math.NaN()}) }, "PiecewiseConstant NaN"},
		{"exponential steps", func() (Schedule, error) { return ExponentialDecay(1, 0, 0.5, false) }, "decaySteps 0"},
		{"exponential rate", func() (Schedule, error) { return ExponentialDecay(1, 10, -0.5, false) }, "rate -0.5"},
		{"exponential initial", func() (Schedule, error) { return ExponentialDecay(math.Inf(1), 10, 0.5, false) }, "initial +Inf"},
		{"cosine steps", func() (Schedule, error) { return CosineDecay(1, -1, 0) }, "decaySteps -1"},
		{"cosine alpha", func() (Schedule, error) { return CosineDecay(1, 10, 1.5) }, "alpha 1.5"},
		{"cosine initial", func() (Schedule, error) { return CosineDecay(-1, 10, 0) }, "initial -1"},
		{"warmup nil", func() (Schedule, error) { return Warmup(nil, 10, 0) }, "nil schedule"},
		{"warmup steps", func() (Schedule, error) { return Warmup(constant(1), 0, 0) }, "warmupSteps 0"},
		{"warmup initial", func() (Schedule, error) { return Warmup(constant(1), 5, -1) }, "initial -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := c.make()
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), "optim: ")
		})
	}
}
