package dist

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRingAllreduce(t *testing.T) {
	net := Network{Latency: 10 * time.Microsecond, Bandwidth: 1e9}
	tests := []struct {
		p    int
		n    float64
		want time.Duration
	}{
		{1, 1e6, 0},
		{2, 0, 0},
		{2, 1e6, 2*10*time.Microsecond + time.Millisecond},      // 2 steps of 0.5 MB
		{4, 1e6, 6*10*time.Microsecond + 1500*time.Microsecond}, // 6 steps of 0.25 MB
		{32, 4e6, 62*10*time.Microsecond + 7750*time.Microsecond},
	}
	for _, tc := range tests {
		assert.InDelta(t, tc.want.Seconds(), RingAllreduce(tc.p, tc.n, net).Seconds(), 1e-9, "p=%d n=%g", tc.p, tc.n)
	}
}

func TestProject(t *testing.T) {
	net := Network{Latency: 0, Bandwidth: 1e9}
	// 2 workers: 1 ms of allreduce per 9 ms step: speedup 2·9/10.
	p, err := Project(2, 90, 9*time.Millisecond, []float64{0.5e6, 0.5e6}, net)
	require.NoError(t, err)
	assert.InDelta(t, 1.8, p.Speedup, 1e-9)
	assert.InDelta(t, 0.9, p.Efficiency, 1e-9)
	assert.InDelta(t, 18000, p.Throughput, 1e-6)
	assert.Equal(t, time.Millisecond, p.Allreduce)
	one, err := Project(1, 90, 9*time.Millisecond, []float64{1e6}, net)
	require.NoError(t, err)
	assert.Equal(t, 1.0, one.Speedup)
	_, err = Project(0, 90, time.Millisecond, nil, net)
	assert.ErrorContains(t, err, "want positive workers")
}

func TestFitAlphaBeta(t *testing.T) {
	sizes := []float64{1e3, 1e5, 1e6}
	times := make([]time.Duration, len(sizes))
	for i, n := range sizes {
		times[i] = 5*time.Microsecond + time.Duration(n/2e9*1e9)
	}
	net, err := FitAlphaBeta(sizes, times)
	require.NoError(t, err)
	assert.InDelta(t, 5e-6, net.Latency.Seconds(), 1e-8)
	assert.InDelta(t, 2e9, net.Bandwidth, 2e6)
	_, err = FitAlphaBeta([]float64{1, 1}, []time.Duration{1, 2})
	assert.ErrorContains(t, err, "all the same")
	_, err = FitAlphaBeta([]float64{1}, []time.Duration{1})
	assert.ErrorContains(t, err, "at least 2")
}
