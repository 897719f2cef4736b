package bench

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/runlog"
	"github.com/plumbml/plumb/tensor"
)

// BenchmarkVariableLengthRSS trains an LSTM classifier (16 features, 64
// units, a dense layer to 10 classes, Adam) for 2,000 batches of 4
// sequences whose lengths are drawn uniformly from 5 to 500, on one tape
// released after every step, and reports the process's peak and final
// resident set and the bytes tensor's pool holds at the end. Free lists
// that kept every buffer would hold one of every size class any batch
// used; tensor's pool drops what the last steps did not take again and
// never holds more than its limit (tensor.SetPoolLimit), so RSS stays
// under the limit plus one step's working set plus the garbage
// collector's headroom. "keep_all" is the same run with free lists that
// keep everything (no limit, no idle dropping), for comparison. It prints
// RSS, heap and pool every 100 batches to stderr as it goes. Peak RSS is
// the process's, so run each case alone, once:
//
//	go test ./bench -run xxx -bench 'VariableLengthRSS/bounded' -benchtime 1x
//	go test ./bench -run xxx -bench 'VariableLengthRSS/keep_all' -benchtime 1x
func BenchmarkVariableLengthRSS(b *testing.B) {
	b.Run("bounded", variableLengthRSS)
	b.Run("keep_all", func(b *testing.B) {
		defer tensor.SetPoolLimit(tensor.SetPoolLimit(1 << 40))
		defer tensor.SetPoolIdleFlushes(tensor.SetPoolIdleFlushes(0))
		variableLengthRSS(b)
	})
}

func variableLengthRSS(b *testing.B) {
	const batches, seqs, features, units, classes = 2000, 4, 16, 64, 10
	rng := tensor.NewRNG(1)
	lstm, err := layers.NewLSTM("lstm", layers.RNNConfig{In: features, Units: units}, rng)
	require.NoError(b, err)
	head, err := layers.NewLinear("head", units, classes, rng)
	require.NoError(b, err)
	params := append(lstm.Params(), head.Params()...)
	opt, err := optim.NewAdam(params, optim.LR(1e-3))
	require.NoError(b, err)
	tape := graph.NewTape()
	var peakHeap uint64
	var ms runtime.MemStats
	for range b.N {
		for i := range batches {
			offsets := make([]int, seqs+1)
			for s := range seqs {
				offsets[s+1] = offsets[s] + 5 + rng.IntN(496)
			}
			x, err := tensor.RandNormal(rng, tensor.Float32, 0, 1, offsets[seqs], features)
			require.NoError(b, err)
			labels := make([]int64, seqs)
			for s := range labels {
				labels[s] = int64(rng.IntN(classes))
			}
			seq := graph.Seq{Values: tape.Const(x), Offsets: offsets}
			loss := graph.SoftmaxCrossEntropy(head.Forward(lstm.Final(seq)), tensor.MustFromSlice(labels))
			require.NoError(b, tape.Backward(loss))
			require.NoError(b, opt.Step())
			tape.Release()
			if i%100 == 99 {
				runtime.ReadMemStats(&ms)
				peakHeap = max(peakHeap, ms.HeapInuse)
				now, peak := runlog.RSS()
				fmt.Fprintf(os.Stderr, "batch %d: RSS %d MiB (peak %d), heap in use %d MiB, pool %d MiB\n", i+1, now>>20, peak>>20, ms.HeapInuse>>20, tensor.PoolBytes()>>20)
			}
		}
	}
	now, peak := runlog.RSS()
	b.ReportMetric(float64(peak)/(1<<20), "peak-RSS-MiB")
	b.ReportMetric(float64(now)/(1<<20), "end-RSS-MiB")
	b.ReportMetric(float64(peakHeap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(tensor.PoolBytes())/(1<<20), "pool-MiB")
}
