package par

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The next spin follows the gaps between tasks: kept while tasks come
// within it, twice a gap that a longer spin would have caught, halved
// (down to the floor) by a gap longer than any spin, never above the
// longest spin.
func TestNextSpin(t *testing.T) {
	const ms, us = time.Millisecond, time.Microsecond
	for _, tc := range []struct {
		name                     string
		spin, gap, longest, want time.Duration
	}{
		{"came while spinning", 2 * ms, 300 * us, 2 * ms, 2 * ms},
		{"came at the end of the spin", 500 * us, 500 * us, 2 * ms, 500 * us},
		{"came soon after parking", 100 * us, 400 * us, 2 * ms, 800 * us},
		{"came after parking, twice the gap capped", 100 * us, 1500 * us, 2 * ms, 2 * ms},
		{"long gap halves", 2 * ms, 50 * ms, 2 * ms, 1 * ms},
		{"long gap stops at the floor", 80 * us, time.Second, 2 * ms, 62500 * time.Nanosecond},
		{"gap of exactly the longest halves", 1 * ms, 2 * ms, 2 * ms, 500 * us},
		{"knob lowered below the spin", 2 * ms, 10 * us, 100 * us, 100 * us},
		{"knob 0 never spins", 0, 5 * ms, 0, 0},
		{"knob 0 after a short gap", 0, 10 * us, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, nextSpin(tc.spin, tc.gap, tc.longest))
		})
	}
}

// A run of long gaps backs the spin off to the floor in a few tasks, and a
// run of short ones brings it back to the longest.
func TestNextSpinBacksOffAndRecovers(t *testing.T) {
	longest, spin := DefaultSpin, DefaultSpin
	for range 5 {
		spin = nextSpin(spin, time.Second, longest)
	}
	require.Equal(t, longest>>minSpinShift, spin)
	for range 4 {
		spin = nextSpin(spin, longest-time.Microsecond, longest)
	}
	require.Equal(t, longest, spin)
}

func TestParseSpin(t *testing.T) {
	for _, tc := range []struct {
		env     string
		want    time.Duration
		wantErr string
	}{
		{"", DefaultSpin, ""},
		{"0", 0, ""},
		{"500us", 500 * time.Microsecond, ""},
		{"10ms", 10 * time.Millisecond, ""},
		{"-1ms", DefaultSpin, `plumb: PLUMB_SPIN="-1ms": want a duration of 0 or more such as 500us or 2ms; using 2ms`},
		{"fast", DefaultSpin, `plumb: PLUMB_SPIN="fast": want a duration of 0 or more such as 500us or 2ms; using 2ms`},
	} {
		t.Run(tc.env, func(t *testing.T) {
			d, err := parseSpin(tc.env)
			require.Equal(t, tc.want, d)
			if tc.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tc.wantErr)
			}
		})
	}
}

// setMaxSpin sets the longest spin for one test.
func setMaxSpin(t *testing.T, d time.Duration) {
	old := maxSpin.Load()
	maxSpin.Store(int64(d))
	t.Cleanup(func() { maxSpin.Store(old) })
}

// A helper waiting for a task parks after its own spin, not after the
// longest one, and a task given to it while parked sets its next spin from
// the gap; with the knob at 0 it parks at once whatever its spin was.
func TestAwaitParksAfterItsSpin(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		name             string
		longest, spin    time.Duration
		sleep            time.Duration // after it parked, before the task is given
		minNext, maxNext time.Duration
	}{
		{"parks after its spin; a gap under the longest widens it", time.Minute, 4 * ms, 0, 8 * ms, time.Minute},
		{"a gap over the longest halves it", 10 * ms, 4 * ms, 50 * ms, 2 * ms, 2 * ms},
		{"knob 0 parks at once", 0, time.Minute, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setMaxSpin(t, tc.longest)
			h := &helper{wake: make(chan struct{}, 1)}
			h.spin.Store(int64(tc.spin))
			got := make(chan *task, 1)
			go func() { got <- h.await() }()
			require.Eventually(t, h.sleeping.Load, 10*time.Second, 100*time.Microsecond, "the helper did not park")
			time.Sleep(tc.sleep)
			tk := &task{worker: 7}
			h.give(tk)
			require.Same(t, tk, <-got)
			next := time.Duration(h.spin.Load())
			require.GreaterOrEqual(t, next, tc.minNext)
			require.LessOrEqual(t, next, tc.maxNext)
		})
	}
}
