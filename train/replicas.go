package train

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"iter"

	"github.com/plumbml/plumb/graph"
)

// Replicas makes a run data-parallel: Size() processes run the same
// program, each trains on its own shard of every epoch, and they average
// their gradients after every backward pass, so every process holds the
// same model. Package dist implements it over MPI (and over one process,
// or goroutines, without MPI).
//
// With Replicas set, Run
//   - starts every rank from rank 0's parameters and optimizer state
//     (after ResumeFrom, which every rank reads);
//   - shards Train: a source whose ShardOf() says it is a shard (such as
//     data.Loader.Shard's) must be this rank's; any other source is read
//     whole on every rank and rank r keeps batches r, r+Size, ... of each
//     epoch (Shard);
//   - takes batch norm's training statistics over every rank's batch
//     (graph's Tape.SetCrossReplica with SumAcross), so that Size() ranks
//     at batch B train as one process at batch Size()·B;
//   - averages gradients before every optimizer step, and checks the mean
//     loss over all ranks for NaN, so every rank stops together;
//   - reports the losses, examples and throughput of all ranks together,
//     the same figures on every rank (hooks run on every rank: install
//     logging hooks on rank 0 only);
//   - averages the non-trainable state (batch norm statistics) at the end
//     of every epoch, then evaluates on rank 0 only and sends its metrics
//     to the others, so the best epoch and early stopping agree;
//   - writes checkpoints (BestPath, StatePath) and reports Progress on
//     rank 0 only.
type Replicas interface {
	Rank() int
	Size() int
	// SyncParams sets params on every rank to rank 0's values.
	SyncParams(params []*graph.Param) error
	// AverageGradients replaces each trainable parameter's gradient by
	// the examples-weighted mean over the ranks and returns the weighted
	// mean loss and the total number of examples.
	AverageGradients(params []*graph.Param, loss float64, examples int) (float64, int, error)
	// AverageState replaces each non-trainable parameter by its mean over
	// the ranks.
	AverageState(params []*graph.Param) error
	// Share returns rank 0's b on every rank.
	Share(b []byte) ([]byte, error)
	// SumAcross replaces buf, on every rank, by the element-wise sum of
	// every rank's buf.
	SumAcross(buf []float64) error
}

// Shard returns rank's share of src for a run over ranks processes:
// batches rank, rank+ranks, rank+2·ranks, … of each epoch. Every rank
// reads the whole epoch (a data.Loader shards without gathering the other
// ranks' batches: use its Shard instead). The last batches of an epoch
// that do not make a whole group of ranks are left out, so that every rank
// takes the same number of steps. Len is src's divided by ranks.
func Shard[B any](src Source[B], rank, ranks int) (Source[B], error) {
	if src == nil || ranks < 1 || rank < 0 || rank >= ranks {
		return nil, fmt.Errorf("train: Shard(%d, %d) of source %v: want a source and 0 <= rank < ranks", rank, ranks, src)
	}
	return &shard[B]{src: src, rank: rank, ranks: ranks}, nil
}

type shard[B any] struct {
	src         Source[B]
	rank, ranks int
}

func (s *shard[B]) Len() int                   { return s.src.Len() / s.ranks }
func (s *shard[B]) ShardOf() (rank, ranks int) { return s.rank, s.ranks }

func (s *shard[B]) Batches(epoch int) iter.Seq2[B, error] {
	return func(yield func(B, error) bool) {
		var mine B
		i := 0
		for b, err := range s.src.Batches(epoch) {
			if err != nil {
				var zero B
				yield(zero, err)
				return
			}
			if i%s.ranks == s.rank {
				mine = b
			}
			i++
			if i%s.ranks == 0 && !yield(mine, nil) {
				return
			}
		}
	}
}

// sharded returns cfg's training source as rank's shard.
func sharded[B any](src Source[B], rp Replicas) (Source[B], error) {
	rank, size := rp.Rank(), rp.Size()
	if sh, ok := src.(interface{ ShardOf() (int, int) }); ok {
		if r, n := sh.ShardOf(); n <= 1 && size > 1 { // not sharded (an unsharded data.Loader)
			return Shard(src, rank, size)
		} else if r != rank || n != size {
			return nil, fmt.Errorf("train: the training source is shard %d of %d, but this is rank %d of %d", r, n, rank, size)
		}
		return src, nil
	}
	return Shard(src, rank, size)
}

// evaluation is rank 0's evaluation, as sent to the other ranks.
type evaluation struct {
	Metrics Metrics
	Err     string
}

// shareEvaluation runs eval on rank 0 and returns its outcome on every rank.
func shareEvaluation(rp Replicas, eval func() (Metrics, error)) (Metrics, error) {
	var ev evaluation
	if rp.Rank() == 0 {
		m, err := eval()
		ev.Metrics = m
		if err != nil {
			ev.Err = err.Error()
		}
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(ev); err != nil {
		return nil, fmt.Errorf("train: encoding rank 0's metrics: %w", err)
	}
	b, err := rp.Share(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("train: sharing rank 0's evaluation: %w", err)
	}
	ev = evaluation{}
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&ev); err != nil {
		return nil, fmt.Errorf("train: decoding rank 0's metrics: %w", err)
	}
	if ev.Err != "" {
		return nil, fmt.Errorf("on rank 0: %s", ev.Err)
	}
	return ev.Metrics, nil
}
