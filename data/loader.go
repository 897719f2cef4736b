package data

import (
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
)

// Option configures a Loader or a Stream.
type Option func(*options)

type options struct {
	shuffle      bool
	seed         uint64
	dropLast     bool
	bucketField  string
	bucketWindow int
	balanceField string
	buffer       int // Stream only
	size         int // Stream only
}

// Shuffle draws a new order every epoch from seed and the epoch number, so
// a given seed and epoch always give the same batches (and a resumed run
// replays the epoch it stopped in).
func Shuffle(seed uint64) Option { return func(o *options) { o.shuffle, o.seed = true, seed } }

// DropLast drops the examples that do not fill a last whole batch, so every
// batch has exactly the batch size. Without it the last batch holds the
// remainder.
func DropLast() Option { return func(o *options) { o.dropLast = true } }

// BucketBy groups sequences of similar length: the epoch's order is cut
// into windows of window batches, each window is sorted (stably) by the
// length of the ragged field name and cut into batches, and then, with
// Shuffle, the batches themselves are shuffled. Batches of sequences then
// waste little padding while every epoch still sees a new order. This is
// the "bucket by sequence length within a pool" scheme of
// tf.data's bucket_by_sequence_length and torchtext's BucketIterator.
func BucketBy(name string, window int) Option {
	return func(o *options) { o.bucketField, o.bucketWindow = name, window }
}

// BalanceBy makes a sharded loader (Shard) deal each step's rows to the
// ranks by the length of the ragged field name, so that every rank gets a
// like share of the step's work: the rows of the step's batches are pooled,
// sorted longest first and dealt in snake order (0, 1, …, R-1, R-1, …, 0,
// 0, …), each rank keeping its batch's size. Then no rank of a
// data-parallel step waits long for another that drew the long sequences,
// since the ranks meet at every step's allreduce. BucketBy balances by its
// own field unless BalanceBy names another. Without a sharded loader it
// changes nothing.
func BalanceBy(name string) Option { return func(o *options) { o.balanceField = name } }

// ShuffleBuffer sets a Stream's shuffle buffer to n examples (default
// 1024): as in tf.data's Dataset.shuffle, each arriving example goes into
// the buffer and a uniformly drawn buffered example comes out, so memory
// stays at n examples however long the stream. Loaders reject it.
func ShuffleBuffer(n int) Option { return func(o *options) { o.buffer = n } }

// Size declares how many examples a Stream yields per epoch, for its Len
// (progress and ETA); without it Len is 0. Loaders reject it.
func Size(n int) Option { return func(o *options) { o.size = n } }

func buildOptions(batchSize int, opts []Option) (options, error) {
	var o options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if batchSize < 1 {
		return o, fmt.Errorf("data: batch size %d: want at least 1", batchSize)
	}
	if o.bucketField != "" && o.bucketWindow < 1 {
		return o, fmt.Errorf("data: BucketBy(%q, %d): the window needs at least 1 batch", o.bucketField, o.bucketWindow)
	}
	if o.buffer < 0 || o.size < 0 {
		return o, fmt.Errorf("data: ShuffleBuffer(%d) and Size(%d) cannot be negative", o.buffer, o.size)
	}
	return o, nil
}

// epochRNG is the random stream of one epoch: a function of seed and epoch
// only. Epoch 0's stream is tensor.NewRNG(seed)'s, so the first epoch's
// order is the one the earlier Dataset.Batches drew for that seed.
func epochRNG(seed uint64, epoch int) *rand.Rand {
	return rand.New(rand.NewPCG(seed, uint64(epoch+1)*0x9e3779b97f4a7c15))
}

// Loader batches an in-memory Dataset. It satisfies the trainer's source
// interface (Len() int; Batches(epoch int) iter.Seq2[*Batch, error]).
type Loader struct {
	ds   *Dataset
	size int
	opt  options
	// rank and ranks: this loader yields rank's share of each epoch's
	// batches when ranks > 1 (see Shard).
	rank, ranks int
}

// NewLoader batches ds in batches of batchSize examples, with options
// Shuffle, DropLast and BucketBy (whose field must be ragged).
func NewLoader(ds *Dataset, batchSize int, opts ...Option) (*Loader, error) {
	if ds == nil {
		return nil, fmt.Errorf("data: NewLoader of a nil dataset")
	}
	o, err := buildOptions(batchSize, opts)
	if err != nil {
		return nil, err
	}
	if o.buffer != 0 || o.size != 0 {
		return nil, fmt.Errorf("data: NewLoader: ShuffleBuffer and Size are Stream options")
	}
	if o.bucketField != "" && ds.Ragged(o.bucketField) == nil {
		return nil, fmt.Errorf("data: NewLoader: BucketBy(%q): no ragged field of that name in %v", o.bucketField, ds.Names())
	}
	if o.balanceField != "" && ds.Ragged(o.balanceField) == nil {
		return nil, fmt.Errorf("data: NewLoader: BalanceBy(%q): no ragged field of that name in %v", o.balanceField, ds.Names())
	}
	if o.balanceField == "" {
		o.balanceField = o.bucketField
	}
	return &Loader{ds: ds, size: batchSize, opt: o}, nil
}

// Dataset returns the dataset being batched.
func (l *Loader) Dataset() *Dataset {
	if l == nil {
		return nil
	}
	return l.ds
}

// Len is the number of examples an epoch yields: all of them, or with
// DropLast the largest multiple of the batch size; for a shard (Shard),
// the examples of its batches. A Loader not made by NewLoader yields
// nothing.
func (l *Loader) Len() int {
	if l == nil || l.ds == nil || l.size < 1 {
		return 0
	}
	n := l.examples()
	if n == 0 || l.ranks <= 1 {
		return n
	}
	all := (n + l.size - 1) / l.size // batches before sharding
	steps := all / l.ranks
	if rest := n % l.size; rest != 0 && all%l.ranks == 0 && l.rank == l.ranks-1 {
		return (steps-1)*l.size + rest // this shard holds the short last batch
	}
	return steps * l.size
}

// NumBatches is the number of batches an epoch yields.
func (l *Loader) NumBatches() int {
	n := l.examples()
	if n == 0 {
		return 0
	}
	return (n + l.size - 1) / l.size / max(l.ranks, 1)
}

// examples is the number of examples an epoch yields before sharding.
func (l *Loader) examples() int {
	if l == nil || l.ds == nil || l.size < 1 {
		return 0
	}
	if l.opt.dropLast {
		return l.ds.Len() / l.size * l.size
	}
	return l.ds.Len()
}

// Shard returns the loader of rank's share of every epoch, for
// data-parallel training over ranks processes: batches rank, rank+ranks,
// rank+2·ranks, … of the epoch's order (Order, the same on every rank for
// a given seed and epoch). Each shard has the same number of batches, so
// every rank takes the same number of steps: the last len%ranks batches of
// an epoch are left out. Over the ranks, step k's batches are the rows of
// batches k·ranks to k·ranks+ranks-1, the rows one process with batch size
// ranks·batch takes at its step k, and no row is seen twice. With
// BalanceBy (or BucketBy) those rows are dealt to the ranks by length
// instead, and with BucketBy and Shuffle whole steps are shuffled, so a
// step's ranks get neighbouring batches of a sorted window. Only the
// shard's own batches are gathered.
func (l *Loader) Shard(rank, ranks int) (*Loader, error) {
	if l == nil || l.ds == nil {
		return nil, fmt.Errorf("data: Loader.Shard(%d, %d) of a Loader not made by NewLoader", rank, ranks)
	}
	if ranks < 1 || rank < 0 || rank >= ranks {
		return nil, fmt.Errorf("data: Loader.Shard(%d, %d): want 0 <= rank < ranks", rank, ranks)
	}
	if l.ranks > 1 {
		return nil, fmt.Errorf("data: Loader.Shard(%d, %d) of a loader that is already shard %d of %d", rank, ranks, l.rank, l.ranks)
	}
	s := *l
	s.rank, s.ranks = rank, ranks
	return &s, nil
}

// ShardOf returns the shard's rank and the number of ranks (0 and 1 for a
// loader that is not sharded).
func (l *Loader) ShardOf() (rank, ranks int) {
	if l == nil {
		return 0, 1
	}
	return l.rank, max(l.ranks, 1)
}

// Order returns the dataset rows of each batch of epoch, the plan that
// Batches follows: the rows in order (or a permutation drawn from the seed
// and epoch with Shuffle), cut to whole batches with DropLast, sorted by
// length within windows with BucketBy, then cut into batches (shuffled
// with Shuffle and BucketBy).
func (l *Loader) Order(epoch int) [][]int {
	if l.Len() == 0 {
		return nil
	}
	rng := epochRNG(l.opt.seed, epoch)
	var perm []int
	if l.opt.shuffle {
		perm = rng.Perm(l.ds.Len())
	} else {
		perm = make([]int, l.ds.Len())
		for i := range perm {
			perm[i] = i
		}
	}
	perm = perm[:l.examples()]
	if l.opt.bucketField != "" {
		off := l.ds.Ragged(l.opt.bucketField).Offsets
		length := func(i int) int { return off[i+1] - off[i] }
		w := l.opt.bucketWindow * l.size
		for from := 0; from < len(perm); from += w {
			slices.SortStableFunc(perm[from:min(from+w, len(perm))], func(a, b int) int { return length(a) - length(b) })
		}
	}
	batches := make([][]int, 0, (len(perm)+l.size-1)/l.size)
	for from := 0; from < len(perm); from += l.size {
		batches = append(batches, perm[from:min(from+l.size, len(perm))])
	}
	if l.ranks <= 1 {
		if l.opt.shuffle && l.opt.bucketField != "" {
			rng.Shuffle(len(batches), func(i, j int) { batches[i], batches[j] = batches[j], batches[i] })
		}
		return batches
	}
	steps := len(batches) / l.ranks
	if l.opt.shuffle && l.opt.bucketField != "" {
		// Shuffle whole steps, so that a step's batches are neighbours in
		// a sorted window and its ranks get sequences of like lengths.
		rng.Shuffle(steps, func(i, j int) {
			a, b := batches[i*l.ranks:(i+1)*l.ranks], batches[j*l.ranks:(j+1)*l.ranks]
			for k := range a {
				a[k], b[k] = b[k], a[k]
			}
		})
	}
	mine := make([][]int, steps)
	for k := range mine {
		step := batches[k*l.ranks : (k+1)*l.ranks]
		if l.opt.balanceField == "" {
			mine[k] = step[l.rank]
		} else {
			mine[k] = l.deal(step)
		}
	}
	return mine
}

// deal pools the rows of one step's batches, sorts them longest first by
// the balance field and deals them in snake order; it returns this rank's
// rows, as many as its batch of the step holds (see BalanceBy).
func (l *Loader) deal(step [][]int) []int {
	off := l.ds.Ragged(l.opt.balanceField).Offsets
	length := func(i int) int { return off[i+1] - off[i] }
	pool := slices.Concat(step...)
	slices.SortStableFunc(pool, func(a, b int) int { return length(b) - length(a) })
	room := make([]int, len(step))
	for r, b := range step {
		room[r] = len(b)
	}
	mine := make([]int, 0, room[l.rank])
	r, dir := 0, 1
	for _, row := range pool {
		for room[r] == 0 { // a short last batch is full: pass it by
			r, dir = snake(r, dir, len(step))
		}
		room[r]--
		if r == l.rank {
			mine = append(mine, row)
		}
		r, dir = snake(r, dir, len(step))
	}
	return mine
}

// snake steps r through 0, 1, …, n-1, n-1, …, 0, 0, 1, … (dir is +1 or -1).
func snake(r, dir, n int) (int, int) {
	if next := r + dir; next >= 0 && next < n {
		return next, dir
	}
	return r, -dir
}

// Batches yields epoch's batches (see Order); each batch is a fresh copy
// of its examples. A given seed and epoch always give the same batches.
// The error is always nil for an in-memory dataset; the signature matches
// streams, whose reads can fail.
func (l *Loader) Batches(epoch int) iter.Seq2[*Batch, error] {
	return func(yield func(*Batch, error) bool) {
		for _, idx := range l.Order(epoch) {
			b := &Batch{n: len(idx), fields: gatherFields(l.ds.fields, idx), index: idx}
			if !yield(b, nil) {
				return
			}
		}
	}
}
