package data

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"

	"github.com/plumbml/plumb/data/internal/fileio"
)

// Stream batches examples read lazily, for data that does not fit in
// memory: each epoch calls open for a fresh pass (reopening files, say) and
// batches what it yields, holding at most the shuffle buffer plus one
// bucketing window of examples. It satisfies the trainer's source
// interface, as Loader does.
type Stream struct {
	open func() iter.Seq2[Example, error]
	size int
	opt  options
}

// defaultBuffer is a Stream's shuffle buffer when ShuffleBuffer is not given.
const defaultBuffer = 1024

// NewStream batches the examples of open's passes in batches of batchSize,
// with options Shuffle (through a buffer, see ShuffleBuffer), DropLast,
// BucketBy (the field must be a sequence) and Size. A pass stops at the
// first error open's sequence yields, which Batches passes on.
func NewStream(open func() iter.Seq2[Example, error], batchSize int, opts ...Option) (*Stream, error) {
	if open == nil {
		return nil, fmt.Errorf("data: NewStream with a nil open function")
	}
	o, err := buildOptions(batchSize, opts)
	if err != nil {
		return nil, err
	}
	if o.buffer == 0 {
		o.buffer = defaultBuffer
	}
	return &Stream{open: open, size: batchSize, opt: o}, nil
}

// Len is the number of examples per epoch declared with Size (0 when unknown).
func (s *Stream) Len() int {
	if s == nil {
		return 0
	}
	return s.opt.size
}

// Batches reads one pass and yields its batches. With Shuffle the order
// comes from the buffer and a random stream fixed by the seed and epoch,
// so a given seed, epoch and input give the same batches. A read error
// or a malformed example is yielded (with a nil batch) and ends the epoch.
func (s *Stream) Batches(epoch int) iter.Seq2[*Batch, error] {
	return func(yield func(*Batch, error) bool) {
		if s == nil || s.open == nil || s.size < 1 {
			yield(nil, fmt.Errorf("data: Batches of a Stream not made by NewStream"))
			return
		}
		rng := epochRNG(s.opt.seed, epoch)
		window := s.size
		if s.opt.bucketField != "" {
			window = s.opt.bucketWindow * s.size
		}
		var pending []Example // up to one window, in arrival order
		var pendingIdx []int
		emit := func(final bool) bool {
			if s.opt.bucketField != "" {
				var err error
				if pending, pendingIdx, err = s.sortByLength(pending, pendingIdx); err != nil {
					yield(nil, err)
					return false
				}
			}
			var batches []*Batch
			for from := 0; from < len(pending); from += s.size {
				to := min(from+s.size, len(pending))
				if to-from < s.size && final && s.opt.dropLast {
					break
				}
				b, err := collate(pending[from:to], slices.Clone(pendingIdx[from:to]))
				if err != nil {
					yield(nil, fmt.Errorf("data: stream batch at example %d: %w", pendingIdx[from], err))
					return false
				}
				batches = append(batches, b)
			}
			if s.opt.shuffle && s.opt.bucketField != "" {
				rng.Shuffle(len(batches), func(i, j int) { batches[i], batches[j] = batches[j], batches[i] })
			}
			pending, pendingIdx = pending[:0], pendingIdx[:0]
			for _, b := range batches {
				if !yield(b, nil) {
					return false
				}
			}
			return true
		}
		push := func(ex Example, i int) bool {
			pending, pendingIdx = append(pending, ex), append(pendingIdx, i)
			return len(pending) < window || emit(false)
		}
		var buf []Example
		var bufIdx []int
		i := 0
		for ex, err := range s.open() {
			if err != nil {
				yield(nil, err)
				return
			}
			if !s.opt.shuffle {
				if !push(ex, i) {
					return
				}
				i++
				continue
			}
			if len(buf) < s.opt.buffer {
				buf, bufIdx = append(buf, ex), append(bufIdx, i)
				i++
				continue
			}
			k := rng.IntN(len(buf))
			out, outIdx := buf[k], bufIdx[k]
			buf[k], bufIdx[k] = ex, i
			i++
			if !push(out, outIdx) {
				return
			}
		}
		// Drain the buffer in random order.
		rng.Shuffle(len(buf), func(a, b int) { buf[a], buf[b], bufIdx[a], bufIdx[b] = buf[b], buf[a], bufIdx[b], bufIdx[a] })
		for k := range buf {
			if !push(buf[k], bufIdx[k]) {
				return
			}
		}
		if len(pending) > 0 {
			emit(true)
		}
	}
}

// sortByLength orders a window stably by the length of the bucketing field.
func (s *Stream) sortByLength(exs []Example, idx []int) ([]Example, []int, error) {
	lengths := make([]int, len(exs))
	for i, ex := range exs {
		n, ok := seqLen(ex[s.opt.bucketField])
		if !ok {
			return nil, nil, fmt.Errorf("data: stream example %d: BucketBy field %q is a %T, want a sequence", idx[i], s.opt.bucketField, ex[s.opt.bucketField])
		}
		lengths[i] = n
	}
	perm := make([]int, len(exs))
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int { return lengths[a] - lengths[b] })
	outEx, outIdx := make([]Example, len(exs)), make([]int, len(exs))
	for k, p := range perm {
		outEx[k], outIdx[k] = exs[p], idx[p]
	}
	return outEx, outIdx, nil
}

func seqLen(v any) (int, bool) {
	switch s := v.(type) {
	case []int64:
		return len(s), true
	case []int32:
		return len(s), true
	case []float32:
		return len(s), true
	case []float64:
		return len(s), true
	}
	return 0, false
}

// LineSource is a Stream's open function over a text file (raw or gzip)
// read lazily: every pass reopens path and yields parse's example for each
// line (1-based number, without the line ending). parse may return a nil
// example to skip a line; its error, or a read error, ends the pass with
// the file and line named. Each pass reads within DefaultLimits, but for
// the line count, which is unbounded since a pass keeps no line (and it
// refuses a named pipe and binary data).
func LineSource(path string, parse func(n int, line string) (Example, error)) func() iter.Seq2[Example, error] {
	return func() iter.Seq2[Example, error] {
		return func(yield func(Example, error) bool) {
			stop := errors.New("stopped") // the consumer broke out of the loop
			err := fileio.WithFile(path, Limits{}, func(r io.Reader) error {
				return fileio.EachLine(r, path, Limits{MaxRecords: math.MaxInt64}, func(n int, line string) error {
					ex, err := parse(n, line)
					if err != nil {
						return fmt.Errorf("data: %s line %d: %w", path, n, err)
					}
					if ex != nil && !yield(ex, nil) {
						return stop
					}
					return nil
				})
			})
			if err != nil && !errors.Is(err, stop) {
				yield(nil, err)
			}
		}
	}
}
