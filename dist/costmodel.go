package dist

import (
	"fmt"
	"time"
)

// Network is the alpha-beta (latency-bandwidth, Hockney) model of a link:
// sending n bytes takes Latency + n/Bandwidth.
type Network struct {
	Latency   time.Duration // alpha: per message
	Bandwidth float64       // 1/beta: bytes per second
}

// RingAllreduce is the time of a ring allreduce of n bytes over p workers
// under the alpha-beta model: a reduce-scatter and an allgather of p-1
// steps each, every step sending n/p bytes to the next worker,
//
//	T = 2(p-1)·alpha + 2·(p-1)/p · n·beta
//
// (Patarasuk and Yuan 2009; Thakur, Rabenseifner and Gropp 2005). It
// leaves out the time to add the received chunks, which is small beside
// the transfer at network speeds.
func RingAllreduce(p int, n float64, net Network) time.Duration {
	if p <= 1 || n <= 0 {
		return 0
	}
	steps := 2 * float64(p-1)
	sec := steps*net.Latency.Seconds() + steps/float64(p)*n/net.Bandwidth
	return time.Duration(sec * float64(time.Second))
}

// Projection is the throughput of data-parallel training on Workers
// workers, each with the per-worker batch of the 1-worker step.
type Projection struct {
	Workers    int
	Step       time.Duration // compute + allreduce
	Allreduce  time.Duration
	Throughput float64 // examples per second over all workers
	Speedup    float64 // Throughput over one worker's
	Efficiency float64 // Speedup / Workers
}

// Project projects training with workers workers from one worker's step:
// compute is the time one worker needs for its batch of batch examples
// (forward, backward and update), and messages the sizes in bytes of the
// allreduces of a step (Replicas makes a small one of losses and counts,
// then one per bucket of gradients). The allreduces do not overlap the
// computation (as in package dist), so a step takes compute plus their
// RingAllreduce times; the per-worker batch stays the same (weak scaling),
// as in data-parallel training that grows the global batch with the
// workers.
func Project(workers, batch int, compute time.Duration, messages []float64, net Network) (Projection, error) {
	if workers < 1 || batch < 1 || compute <= 0 || net.Bandwidth <= 0 || net.Latency < 0 {
		return Projection{}, fmt.Errorf("dist: Project(workers %d, batch %d, compute %v, %v latency, %g B/s): want positive workers, batch, compute and bandwidth",
			workers, batch, compute, net.Latency, net.Bandwidth)
	}
	var ar time.Duration
	for _, n := range messages {
		ar += RingAllreduce(workers, n, net)
	}
	step := compute + ar
	one := float64(batch) / compute.Seconds()
	tp := float64(workers*batch) / step.Seconds()
	return Projection{Workers: workers, Step: step, Allreduce: ar, Throughput: tp, Speedup: tp / one, Efficiency: tp / one / float64(workers)}, nil
}

// FitAlphaBeta fits T = alpha + n·beta by least squares to allreduce times
// measured at sizes n (bytes), and returns the fitted Network.
func FitAlphaBeta(sizes []float64, times []time.Duration) (Network, error) {
	if len(sizes) != len(times) || len(sizes) < 2 {
		return Network{}, fmt.Errorf("dist: FitAlphaBeta of %d sizes and %d times: want at least 2 of each, as many", len(sizes), len(times))
	}
	var sx, sy, sxx, sxy float64
	for i, n := range sizes {
		t := times[i].Seconds()
		sx, sy, sxx, sxy = sx+n, sy+t, sxx+n*n, sxy+n*t
	}
	k := float64(len(sizes))
	den := k*sxx - sx*sx
	if den == 0 {
		return Network{}, fmt.Errorf("dist: FitAlphaBeta: the sizes are all the same")
	}
	beta := (k*sxy - sx*sy) / den
	alpha := (sy - beta*sx) / k
	if beta <= 0 {
		return Network{}, fmt.Errorf("dist: FitAlphaBeta: the times do not grow with the size (beta %g s/B)", beta)
	}
	return Network{Latency: time.Duration(max(alpha, 0) * float64(time.Second)), Bandwidth: 1 / beta}, nil
}
