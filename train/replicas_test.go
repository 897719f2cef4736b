package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/dist"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/layers"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/tensor"
)

// plainLoss is setup's loss without dropout, so that runs over different
// numbers of ranks compute the same function.
func (s *setup) plainLoss(t *graph.Tape, b pair) (*graph.Value, int) {
	return graph.MSE(s.net.Forward(t.Const(b.x)), t.Const(b.y)), b.x.Dim(0)
}

// replicated runs cfgOf(rank)'s runs on ranks goroutines that meet in a
// dist.NewGroup, and returns each rank's result and error.
func replicated(t *testing.T, ranks int, cfgOf func(rank int, rp Replicas) Config[pair]) ([]Result, []error) {
	t.Helper()
	comms, err := dist.NewGroup(ranks, 10*time.Second)
	require.NoError(t, err)
	res, errs := make([]Result, ranks), make([]error, ranks)
	var wg sync.WaitGroup
	for r := range ranks {
		wg.Go(func() { res[r], errs[r] = Run(cfgOf(r, dist.NewReplicas(comms[r], 64))) })
	}
	wg.Wait()
	return res, errs
}

// Data-parallel runs over 2 and 3 ranks, each rank at batch 4 on its
// shard, end with the weights of one process at batch 4×ranks (up to
// round-off), the same on every rank bit for bit, although the ranks
// started from different weights; only rank 0 evaluates and saves, and
// every rank reports the same losses and metrics.
func TestReplicasMatchOneProcess(t *testing.T) {
	for _, ranks := range []int{2, 3} {
		t.Run(fmt.Sprint(ranks, " ranks"), func(t *testing.T) {
			const n, local, epochs = 48, 4, 3
			one := newSetup(t, nil)
			cfg := one.config(regression{n: n, size: local * ranks, seed: 2}, epochs)
			cfg.Loss = one.plainLoss
			want, err := Run(cfg)
			require.NoError(t, err)

			dir := t.TempDir()
			setups := make([]*setup, ranks)
			evals := make([]int, ranks)
			res, errs := replicated(t, ranks, func(rank int, rp Replicas) Config[pair] {
				s := newSetup(t, nil)
				if rank > 0 { // SyncParams must give every rank rank 0's start
					s.net.Params()[0].Value.Float64s()[0] += float64(rank)
				}
				setups[rank] = s
				c := s.config(regression{n: n, size: local, seed: 2}, epochs)
				c.Loss, c.Replicas = s.plainLoss, rp
				c.Evaluate = func(func(int, int)) (Metrics, error) {
					evals[rank]++
					return Metrics{"mse": mse(s)}, nil
				}
				c.Monitor = "mse"
				c.BestPath = bestPath(dir, rank)
				return c
			})
			for r := range ranks {
				require.NoError(t, errs[r], "rank %d", r)
				assert.Equal(t, setups[0].weights(), setups[r].weights(), "rank %d's weights", r)
				require.Len(t, res[r].Epochs, epochs)
				for e := range epochs {
					assert.InDelta(t, want.Epochs[e].TrainLoss, res[r].Epochs[e].TrainLoss, 1e-12, "rank %d epoch %d", r, e+1)
					assert.Equal(t, res[0].Epochs[e].Metrics, res[r].Epochs[e].Metrics)
				}
				_, err := os.Stat(bestPath(dir, r))
				assert.Equal(t, r == 0, err == nil, "only rank 0 writes the best checkpoint (rank %d: %v)", r, err)
			}
			assert.Equal(t, epochs, evals[0])
			assert.Zero(t, evals[1], "only rank 0 evaluates")
			assert.InDeltaSlice(t, one.weights(), setups[0].weights(), 1e-12)
		})
	}
}

func bestPath(dir string, rank int) string {
	return filepath.Join(dir, fmt.Sprintf("best%d.safetensors", rank))
}

// An error in rank 0's evaluation, and a NaN loss on one rank, end the run
// on every rank with an error (none is left waiting for the others), with
// or without batch norm's cross-replica sums in the backward pass.
func TestReplicasFailTogether(t *testing.T) {
	tests := []struct {
		name      string
		evalErr   error
		nanOnRank int  // -1: none
		bn        bool // a net with synchronised batch norm
		want      string
	}{
		{"rank 0's evaluation fails", errors.New("test set missing"), -1, false, "on rank 0: test set missing"},
		{"rank 1's loss is infinite", nil, 1, false, "(non-finite loss)"},
		{"rank 0's loss is infinite, batch norm", nil, 0, true, "(non-finite loss)"},
		{"rank 1's loss is infinite, batch norm", nil, 1, true, "(non-finite loss)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := replicated(t, 2, func(rank int, rp Replicas) Config[pair] {
				s := newSetup(t, nil)
				c := s.config(regression{n: 16, size: 4, seed: 2}, 2)
				c.Replicas = rp
				c.Loss = s.plainLoss
				if tc.bn {
					net, opt := bnNet(t)
					c.Params, c.Optimizer = net.Params(), opt
					c.Loss = func(t *graph.Tape, b pair) (*graph.Value, int) {
						return graph.MSE(net.Forward(t.Const(b.x)), t.Const(b.y)), b.x.Dim(0)
					}
				}
				if rank == tc.nanOnRank {
					plain := c.Loss
					c.Loss = func(t *graph.Tape, b pair) (*graph.Value, int) {
						l, n := plain(t, b)
						return graph.Div(l, graph.Sub(l, l)), n // l/0
					}
				}
				c.Evaluate = func(func(int, int)) (Metrics, error) { return Metrics{"x": 1}, tc.evalErr }
				return c
			})
			for r, err := range errs {
				assert.ErrorContains(t, err, tc.want, "rank %d", r)
			}
		})
	}
}

// unsharded is a source that says it is shard 0 of 1, as an unsharded
// data.Loader does.
type unsharded struct{ regression }

func (unsharded) ShardOf() (int, int) { return 0, 1 }

// A source that says it is not sharded is sharded by the trainer: 2 ranks
// on it end where they end on the generic shard.
func TestReplicasShardAnUnshardedSource(t *testing.T) {
	weights := map[bool][]float64{}
	for _, says := range []bool{false, true} {
		var w []float64
		_, errs := replicated(t, 2, func(rank int, rp Replicas) Config[pair] {
			s := newSetup(t, nil)
			var src Source[pair] = regression{n: 32, size: 4, seed: 2}
			if says {
				src = unsharded{regression{n: 32, size: 4, seed: 2}}
			}
			c := s.config(src, 1)
			c.Loss, c.Replicas = s.plainLoss, rp
			if rank == 0 {
				c.Hooks = []Hooks{{Epoch: func(Epoch) error { w = s.weights(); return nil }}}
			}
			return c
		})
		for _, err := range errs {
			require.NoError(t, err)
		}
		weights[says] = w
	}
	require.NotEmpty(t, weights[false])
	assert.Equal(t, weights[false], weights[true])
}

// A source that is already a shard must be this rank's.
func TestReplicasShardMismatch(t *testing.T) {
	comms, err := dist.NewGroup(1, time.Second)
	require.NoError(t, err)
	s := newSetup(t, nil)
	src, err := Shard[pair](regression{n: 16, size: 4, seed: 2}, 1, 2)
	require.NoError(t, err)
	c := s.config(src, 1)
	c.Replicas = dist.NewReplicas(comms[0], 0)
	_, err = Run(c)
	assert.ErrorContains(t, err, "the training source is shard 1 of 2, but this is rank 0 of 1")
}

// bnNet is a float64 linear → batch norm → linear regression net and its
// SGD optimizer, the same on every call.
func bnNet(t *testing.T) (layers.Sequential, optim.Optimizer) {
	t.Helper()
	f64 := layers.DType(tensor.Float64)
	l1, err := layers.NewLinear("l1", 2, 3, tensor.NewRNG(5), f64)
	require.NoError(t, err)
	bn, err := layers.NewBatchNorm("bn", 3, f64)
	require.NoError(t, err)
	l2, err := layers.NewLinear("l2", 3, 1, tensor.NewRNG(6), f64)
	require.NoError(t, err)
	net := layers.Sequential{l1, bn, l2}
	opt, err := optim.NewSGD(net.Params(), optim.LR(0.05))
	require.NoError(t, err)
	return net, opt
}

// With batch norm, replicas at batch 4 train as one process at batch
// 4×ranks, since the batch statistics are taken over every rank's batch
// (graph's Tape.SetCrossReplica): the same weights and moving statistics,
// up to round-off. Uneven ranks check nothing here; ops' test does.
func TestReplicasSyncBatchNorm(t *testing.T) {
	const n, local, epochs, ranks = 48, 4, 3, 2
	values := func(net layers.Sequential) []float64 {
		var w []float64
		for _, p := range net.Params() {
			w = append(w, p.Value.Float64s()...)
		}
		return w
	}
	lossOf := func(net layers.Sequential) LossFunc[pair] {
		return func(t *graph.Tape, b pair) (*graph.Value, int) {
			return graph.MSE(net.Forward(t.Const(b.x)), t.Const(b.y)), b.x.Dim(0)
		}
	}
	net, opt := bnNet(t)
	_, err := Run(Config[pair]{Params: net.Params(), Optimizer: opt, Train: regression{n: n, size: local * ranks, seed: 4},
		Loss: lossOf(net), Epochs: epochs})
	require.NoError(t, err)
	want := values(net)

	nets := make([]layers.Sequential, ranks)
	_, errs := replicated(t, ranks, func(rank int, rp Replicas) Config[pair] {
		net, opt := bnNet(t)
		nets[rank] = net
		return Config[pair]{Params: net.Params(), Optimizer: opt, Train: regression{n: n, size: local, seed: 4},
			Loss: lossOf(net), Epochs: epochs, Replicas: rp}
	})
	for r := range ranks {
		require.NoError(t, errs[r], "rank %d", r)
		assert.InDeltaSlice(t, want, values(nets[r]), 1e-12, "rank %d against one process", r)
	}
}
