package dist

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// DefaultBucketBytes is how many bytes of gradients go into one fused
// allreduce: large enough that the per-call latency is paid a few times
// per step, not once per tensor (PyTorch DDP's default bucket is 25 MB,
// Horovod's fusion buffer 64 MB).
const DefaultBucketBytes = 16 << 20

// Replicas keeps the copies of a model on every rank of a Comm identical
// for data-parallel training: the trainer's train.Replicas. Every rank
// starts from rank 0's parameters (SyncParams), and after each backward
// pass every rank's gradients are replaced by their mean over all ranks'
// examples (AverageGradients), so each rank applies the same update.
type Replicas struct {
	comm        Comm
	bucketBytes int
	f32         []float32 // reused fusion buffers
	f64         []float64
}

// NewReplicas returns Replicas over c that fuse gradients into buckets of
// at most bucketBytes (DefaultBucketBytes when bucketBytes <= 0).
func NewReplicas(c Comm, bucketBytes int) *Replicas {
	if bucketBytes <= 0 {
		bucketBytes = DefaultBucketBytes
	}
	return &Replicas{comm: c, bucketBytes: bucketBytes}
}

// Comm returns the group the replicas live in.
func (r *Replicas) Comm() Comm {
	if r == nil {
		return nil
	}
	return r.comm
}

// Rank is this process's rank, 0 to Size()-1.
// A Replicas not made by NewReplicas is rank 0.
func (r *Replicas) Rank() int {
	if r == nil || r.comm == nil {
		return 0
	}
	return r.comm.Rank()
}

// Size is the number of ranks.
// A Replicas not made by NewReplicas is one process.
func (r *Replicas) Size() int {
	if r == nil || r.comm == nil {
		return 1
	}
	return r.comm.Size()
}

// SyncParams overwrites the values of params (any dtype, trainable or not,
// optimizer state included when the caller passes it) on every rank with
// rank 0's, in fused broadcasts. Every rank must pass the same parameters
// in the same order, with the same names, dtypes and shapes: the ranks
// first compare them (Agree on ModelFingerprint), and on any difference
// every rank returns the same *Mismatch naming the first parameter that
// differs.
func (r *Replicas) SyncParams(params []*graph.Param) error {
	if r == nil || r.comm == nil {
		return errNoComm
	}
	if r.Size() == 1 {
		return nil
	}
	// Rank 0's broadcasts below fit only ranks that hold the same
	// parameters: compare them first, so that every rank stops with the
	// same error instead of one failing in MPI_Bcast and the others
	// waiting for the watchdog.
	if err := Agree(r.comm, ModelFingerprint(params)); err != nil {
		return err
	}
	var buf []byte
	flush := func(ps []*graph.Param) error {
		if err := r.comm.Broadcast(buf, 0); err != nil {
			return err
		}
		off := 0
		for _, p := range ps {
			off += copy(rawBytes(p.Value), buf[off:])
		}
		buf = buf[:0]
		return nil
	}
	var pending []*graph.Param
	for _, p := range params {
		if p == nil || p.Value == nil {
			return fmt.Errorf("dist: SyncParams: parameter %v has no value", p)
		}
		b := rawBytes(p.Value)
		if b == nil && p.Value.Size() > 0 {
			return fmt.Errorf("dist: SyncParams: parameter %q has dtype %v, which has no raw form", p.Name, p.Value.DType())
		}
		if len(buf)+len(b) > r.bucketBytes && len(pending) > 0 {
			if err := flush(pending); err != nil {
				return err
			}
			pending = pending[:0]
		}
		buf = append(buf, b...)
		pending = append(pending, p)
	}
	if len(pending) > 0 {
		return flush(pending)
	}
	return nil
}

// rawBytes views t's elements as bytes.
func rawBytes(t *tensor.Tensor) []byte {
	switch d := t.Raw().(type) {
	case []float32:
		return bytesOf(d)
	case []float64:
		return bytesOf(d)
	case []int32:
		return bytesOf(d)
	case []int64:
		return bytesOf(d)
	}
	return nil
}

// gradient kinds in the step's header, one count per trainable parameter.
const (
	hasDense = iota
	hasSparse
	kinds
)

// AverageGradients replaces the gradient of every trainable parameter, on
// every rank, by the example-weighted mean over the ranks,
//
//	g = sum_r n_r g_r / sum_r n_r,
//
// where n_r = examples and g_r the gradient of rank r's mean loss over its
// batch: the gradient of the mean loss over the union of the batches, as
// one process with the whole batch computes it (up to the order of the
// sums). It returns the weighted mean of the ranks' losses and the total
// number of examples. A rank with no gradient for a parameter counts as a
// zero gradient; a parameter no rank has a gradient for keeps none.
//
// The step makes one small allreduce (losses, example counts and which
// parameters have which kind of gradient), one fused allreduce per bucket
// of dense gradients (float32 and float64 apart), and for embedding tables
// whose gradient is sparse on every rank, one allgather of the rows
// (GatherRows); a table that is dense on any rank is averaged densely.
func (r *Replicas) AverageGradients(params []*graph.Param, loss float64, examples int) (float64, int, error) {
	if r == nil || r.comm == nil {
		return 0, 0, errNoComm
	}
	if r.Size() == 1 {
		return loss, examples, nil
	}
	var train []*graph.Param
	for _, p := range params {
		if p != nil && p.Trainable && p.Value != nil {
			train = append(train, p)
		}
	}
	w := float64(examples)
	head := make([]float64, 2+kinds*len(train))
	head[0], head[1] = loss*w, w
	for i, p := range train {
		switch {
		case p.SparseGrad != nil && p.Grad == nil:
			head[2+kinds*i+hasSparse] = 1
		case p.Grad != nil:
			head[2+kinds*i+hasDense] = 1
		}
	}
	if err := r.comm.AllreduceFloat64(head); err != nil {
		return 0, 0, err
	}
	total := head[1]
	if !(total > 0) {
		return 0, 0, fmt.Errorf("dist: AverageGradients: the ranks' batches hold %v examples in all; want at least 1", total)
	}
	var dense, sparse []*graph.Param
	for i, p := range train {
		switch {
		case head[2+kinds*i+hasDense] > 0:
			if p.SparseGrad != nil || p.Grad == nil { // densify: another rank holds it dense
				g, err := p.DenseGrad()
				if err != nil {
					return 0, 0, err
				}
				if g == nil {
					g = tensor.ZerosLike(p.Value)
				}
				p.Grad, p.SparseGrad = g, nil
			}
			dense = append(dense, p)
		case head[2+kinds*i+hasSparse] > 0:
			sparse = append(sparse, p)
		}
	}
	scale := w / total // each rank's share: n_r / N
	if err := r.reduceDense(dense, tensor.Float32, scale); err != nil {
		return 0, 0, err
	}
	if err := r.reduceDense(dense, tensor.Float64, scale); err != nil {
		return 0, 0, err
	}
	if err := GatherRows(r.comm, sparse, scale); err != nil {
		return 0, 0, err
	}
	return head[0] / total, int(math.Round(total)), nil
}

// reduceDense sums scale*Grad over the ranks for the parameters of dtype
// dt, in buckets of at most bucketBytes.
func (r *Replicas) reduceDense(ps []*graph.Param, dt tensor.DType, scale float64) error {
	if dt == tensor.Float32 {
		return reduceBuckets(ps, dt, r.bucketBytes/4, scale, &r.f32, r.comm.AllreduceFloat32)
	}
	return reduceBuckets(ps, dt, r.bucketBytes/8, scale, &r.f64, r.comm.AllreduceFloat64)
}

func reduceBuckets[T float32 | float64](ps []*graph.Param, dt tensor.DType, capacity int, scale float64, buf *[]T, reduce func([]T) error) error {
	var pending []*graph.Param
	b := (*buf)[:0]
	flush := func() error {
		if err := reduce(b); err != nil {
			return err
		}
		off := 0
		for _, p := range pending {
			g := tensor.Data[T](p.Grad)
			off += copy(g, b[off:])
		}
		pending, b = pending[:0], b[:0]
		return nil
	}
	s := T(scale)
	for _, p := range ps {
		if p.Grad.DType() != dt {
			continue
		}
		g := tensor.Data[T](p.Grad)
		if len(b)+len(g) > capacity && len(pending) > 0 {
			if err := flush(); err != nil {
				return err
			}
		}
		for _, v := range g {
			b = append(b, v*s)
		}
		pending = append(pending, p)
	}
	var err error
	if len(pending) > 0 {
		err = flush()
	}
	*buf = b
	return err
}

// AverageState replaces every non-trainable float parameter (batch norm's
// moving mean and variance) by its mean over the ranks, so that the model
// rank 0 evaluates and saves, and every rank goes on with, is the same.
// Each rank's statistics come from its own batches; their mean is what
// Horovod and PyTorch users get by averaging buffers after an epoch.
func (r *Replicas) AverageState(params []*graph.Param) error {
	if r == nil || r.comm == nil {
		return errNoComm
	}
	if r.Size() == 1 {
		return nil
	}
	var ps []*graph.Param
	for _, p := range params {
		if p != nil && !p.Trainable && p.Value != nil {
			ps = append(ps, p)
		}
	}
	inv := 1 / float64(r.Size())
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64} {
		var err error
		if dt == tensor.Float32 {
			err = reduceValues(ps, dt, r.bucketBytes/4, inv, &r.f32, r.comm.AllreduceFloat32)
		} else {
			err = reduceValues(ps, dt, r.bucketBytes/8, inv, &r.f64, r.comm.AllreduceFloat64)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// reduceValues is reduceBuckets over the parameters' values.
func reduceValues[T float32 | float64](ps []*graph.Param, dt tensor.DType, capacity int, scale float64, buf *[]T, reduce func([]T) error) error {
	shadow := make([]*graph.Param, 0, len(ps))
	for _, p := range ps {
		if p.Value.DType() == dt {
			shadow = append(shadow, &graph.Param{Name: p.Name, Grad: p.Value})
		}
	}
	return reduceBuckets(shadow, dt, capacity, scale, buf, reduce)
}

// SumAcross replaces buf, on every rank, by the element-wise sum of every
// rank's buf: the trainer hands it to the tape (graph's SetCrossReplica)
// so that batch norm takes its statistics over every rank's batch.
func (r *Replicas) SumAcross(buf []float64) error {
	if r == nil || r.comm == nil {
		return errNoComm
	}
	if r.Size() == 1 {
		return nil
	}
	return r.comm.AllreduceFloat64(buf)
}

// Share sends rank 0's b to every rank and returns it there (rank 0 gets
// b back); the other ranks' b is ignored. The trainer shares rank 0's
// evaluation this way.
func (r *Replicas) Share(b []byte) ([]byte, error) {
	if r == nil || r.comm == nil {
		return nil, errNoComm
	}
	if r.Size() == 1 {
		return b, nil
	}
	n := make([]byte, 8)
	binary.LittleEndian.PutUint64(n, uint64(len(b)))
	if err := r.comm.Broadcast(n, 0); err != nil {
		return nil, err
	}
	size := binary.LittleEndian.Uint64(n)
	if r.Rank() != 0 {
		if size > 1<<31 {
			return nil, fmt.Errorf("dist: Share: rank 0 announced %d bytes", size)
		}
		b = make([]byte, size)
	}
	if err := r.comm.Broadcast(b, 0); err != nil {
		return nil, err
	}
	return b, nil
}

// errNoComm is the error of a Replicas not made by NewReplicas.
var errNoComm = errors.New("dist: a Replicas not made by NewReplicas")
