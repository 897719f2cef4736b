package optim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTransformerSchedules(t *testing.T) {
	m := must(t)
	// transformers' get_linear_schedule_with_warmup(warmup 4, total 12) at peak 1:
	// step/4 while warming, then (12 - step)/8, never below 0.
	hfLinear := m(Warmup(m(LinearDecay(1, 8, 0)), 4, 0))
	for step, want := range map[int64]float64{0: 0, 1: 0.25, 3: 0.75, 4: 1, 6: 0.75, 11: 0.125, 12: 0, 40: 0} {
		assert.InDelta(t, want, hfLinear.LR(step), 1e-15, "linear step %d", step)
	}
	assert.InDelta(t, 0.3, m(LinearDecay(0.5, 10, 0.1)).LR(5), 1e-15)

	// fairseq inverse_sqrt, warmup 4, peak 2: 2·n/4 warming, then 2·sqrt(4/n).
	invSqrt := m(Warmup(m(InverseSqrtDecay(2, 4)), 4, 0))
	for step, want := range map[int64]float64{0: 0, 2: 1, 4: 2, 9: 2 * math.Sqrt(4.0/9), 16: 1, 100: 0.4} {
		assert.InDelta(t, want, invSqrt.LR(step), 1e-15, "inverse sqrt step %d", step)
	}

	// Vaswani et al. eq. 3, d_model 512, warmup 4000: the peak is at s = 4000.
	n := m(Noam(512, 4000, 1))
	peak := 1 / math.Sqrt(512) / math.Sqrt(4000)
	assert.InDelta(t, peak, n.LR(3999), 1e-15)
	assert.InDelta(t, peak/4000, n.LR(0), 1e-15)
	assert.InDelta(t, peak*2000/4000, n.LR(1999), 1e-15)
	assert.InDelta(t, 1/math.Sqrt(512)/math.Sqrt(16000), n.LR(15999), 1e-15)
	assert.Less(t, n.LR(4000), n.LR(3999))
}

func TestTransformerScheduleErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"linear initial", func() error { _, err := LinearDecay(-1, 10, 0); return err }, "LinearDecay: initial -1"},
		{"linear end", func() error { _, err := LinearDecay(1, 10, math.NaN()); return err }, "LinearDecay: end NaN"},
		{"linear steps", func() error { _, err := LinearDecay(1, 0, 0); return err }, "decaySteps 0"},
		{"inverse sqrt initial", func() error { _, err := InverseSqrtDecay(math.Inf(1), 10); return err }, "InverseSqrtDecay: initial"},
		{"inverse sqrt timescale", func() error { _, err := InverseSqrtDecay(1, -2); return err }, "timescale -2"},
		{"noam sizes", func() error { _, err := Noam(0, 10, 1); return err }, "dModel 0"},
		{"noam factor", func() error { _, err := Noam(512, 10, 0); return err }, "Noam: factor 0"},
	} {
		t.Run(c.name, func(t *testing.T) { require.ErrorContains(t, c.err(), c.want) })
	}
}
