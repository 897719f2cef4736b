package run

import (
	"fmt"
	"slices"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/tensor"
)

// rnnAttrs are the attributes ONNX LSTM and GRU share, checked against
// what Plumb's fused ops compute: the default activations, no clip, and
// (LSTM) no coupled input and forget gates.
type rnnAttrs struct {
	hidden     int
	dirs       int  // 1 or 2
	reverse    bool // direction "reverse" (one direction, backwards)
	batchFirst bool // layout 1: X [batch, seq, in]
}

// readRNN reads the shared attributes; defaults are the activations the
// fused op runs (Sigmoid and Tanh for both LSTM and GRU).
func (c *ctx) readRNN(defaults []string, extra ...string) (rnnAttrs, error) {
	var r rnnAttrs
	allowed := append([]string{"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "layout"}, extra...)
	if err := c.n.allow(allowed...); err != nil {
		return r, err
	}
	h, err := c.n.intAttr("hidden_size", 0)
	if err != nil {
		return r, err
	}
	if h < 1 || h > 1<<20 {
		return r, c.n.errorf("hidden_size %d; expected a positive hidden_size", h)
	}
	r.hidden = int(h)
	dir, err := c.n.stringAttr("direction", "forward")
	if err != nil {
		return r, err
	}
	switch dir {
	case "forward":
		r.dirs = 1
	case "reverse":
		r.dirs, r.reverse = 1, true
	case "bidirectional":
		r.dirs = 2
	default:
		return r, c.n.errorf("direction %q; expected forward, reverse or bidirectional", dir)
	}
	acts, ok, err := c.n.stringsAttr("activations")
	if err != nil {
		return r, err
	}
	if ok {
		want := defaults
		if r.dirs == 2 {
			want = append(slices.Clone(defaults), defaults...)
		}
		if !slices.Equal(acts, want) {
			return r, c.n.errorf("activations %v are not supported; expected the defaults %v", acts, want)
		}
	}
	for _, name := range []string{"activation_alpha", "activation_beta", "clip"} {
		if _, ok := c.n.Attr(name); ok {
			return r, c.n.errorf("attribute %q is not supported; expected the default activations without it", name)
		}
	}
	layout, err := c.n.intAttr("layout", 0)
	if err != nil {
		return r, err
	}
	if layout != 0 && layout != 1 {
		return r, c.n.errorf("layout %d; expected 0 ([seq, batch, ...]) or 1 ([batch, seq, ...])", layout)
	}
	r.batchFirst = layout == 1
	return r, nil
}

// rnnShapes checks X, W and R against gates·hidden and fills the outputs'
// shapes: Y [seq, dirs, batch, H] (layout 1: [batch, seq, dirs, H]) and
// the final states [dirs, batch, H].
func (c *ctx) rnnShapes(r rnnAttrs, gates int) error {
	x, w, rr := c.in[0].shape, c.in[1].shape, c.in[2].shape
	if x != nil && len(x) != 3 {
		return c.n.errorf("X has shape %s; expected rank 3", shapeStr(x))
	}
	check := func(i int, s []int, want []int) error {
		if s == nil {
			return nil
		}
		ok := len(s) == len(want)
		for j := 0; ok && j < len(s); j++ {
			ok = s[j] < 0 || want[j] < 0 || s[j] == want[j]
		}
		if !ok {
			return c.n.errorf("input %d %q has shape %s; expected %s", i, c.n.Inputs[i], shapeStr(s), shapeStr(want))
		}
		return nil
	}
	in := -1
	if x != nil {
		in = x[2]
	}
	if err := check(1, w, []int{r.dirs, gates * r.hidden, in}); err != nil {
		return err
	}
	if err := check(2, rr, []int{r.dirs, gates * r.hidden, r.hidden}); err != nil {
		return err
	}
	if c.has(3) {
		if err := check(3, c.in[3].shape, []int{r.dirs, 2 * gates * r.hidden}); err != nil {
			return err
		}
	}
	seq, batch := -1, -1
	if x != nil {
		seq, batch = x[0], x[1]
		if r.batchFirst {
			seq, batch = batch, seq
		}
	}
	for i := range c.out {
		c.out[i] = info{elem: c.in[0].elem, shape: []int{r.dirs, batch, r.hidden}}
		if r.batchFirst {
			c.out[i].shape = []int{batch, r.dirs, r.hidden}
		}
	}
	if len(c.out) > 0 {
		c.out[0].shape = []int{seq, r.dirs, batch, r.hidden}
		if r.batchFirst {
			c.out[0].shape = []int{batch, seq, r.dirs, r.hidden}
		}
	}
	return nil
}

// weightBlocks returns, for direction d of a constant [dirs, gates·H, K]
// weight, the [K, gates·H] matrix with its gate blocks in the order
// order (ONNX block indices), as Plumb's fused ops take it.
func weightBlocks(w *tensor.Tensor, d, h int, order []int) (*tensor.Tensor, error) {
	wd, err := w.Slice(0, d, d+1)
	if err != nil {
		return nil, err
	}
	k := w.Dim(2)
	if wd, err = wd.Reshape(len(order), h, k); err != nil {
		return nil, err
	}
	blocks := make([]*tensor.Tensor, len(order))
	for i, g := range order {
		if blocks[i], err = wd.Slice(0, g, g+1); err != nil {
			return nil, err
		}
	}
	cat, err := tensor.Concat(0, blocks...)
	if err != nil {
		return nil, err
	}
	if cat, err = cat.Reshape(len(order)*h, k); err != nil {
		return nil, err
	}
	return cat.Transpose(1, 0)
}

// vectorBlocks returns the blocks of a [n·H] vector in the order order.
func vectorBlocks(v *tensor.Tensor, h int, order []int) (*tensor.Tensor, error) {
	blocks := make([]*tensor.Tensor, len(order))
	for i, g := range order {
		var err error
		if blocks[i], err = v.Slice(0, g*h, (g+1)*h); err != nil {
			return nil, err
		}
	}
	return tensor.Concat(0, blocks...)
}

// rnnBatch is a padded [seq, batch, in] input (or [batch, seq, in] with
// batchFirst) as Plumb's ragged batch: each sequence's valid steps as
// contiguous rows.
type rnnBatch struct {
	seq, batch int
	lens       []int
	offsets    []int
	x          *tensor.Tensor // [total, in]
}

// pack makes the ragged batch of a time-major X [seq, batch, in] with
// sequence lengths lens (nil: all seq steps).
func pack(x, lens *tensor.Tensor) (*rnnBatch, error) {
	if x.Rank() != 3 {
		return nil, fmt.Errorf("X is %v; expected rank 3", x.Shape())
	}
	b := &rnnBatch{seq: x.Dim(0), batch: x.Dim(1)}
	b.lens = make([]int, b.batch)
	b.offsets = make([]int, b.batch+1)
	for i := range b.lens {
		b.lens[i] = b.seq
		if lens != nil {
			if lens.Size() != b.batch {
				return nil, fmt.Errorf("sequence_lens has %d entries for a batch of %d; expected one per sequence", lens.Size(), b.batch)
			}
			l := intAt(lens, i)
			if l < 0 || l > int64(b.seq) {
				return nil, fmt.Errorf("sequence_lens[%d] is %d; expected 0 to %d", i, l, b.seq)
			}
			b.lens[i] = int(l)
		}
		b.offsets[i+1] = b.offsets[i] + b.lens[i]
	}
	in := x.Dim(2)
	rows := make([]int, 0, b.offsets[b.batch])
	for q := range b.batch {
		for t := range b.lens[q] {
			rows = append(rows, b.row(t, q))
		}
	}
	var err error
	b.x, err = copyRows(x, rows, in)
	return b, err
}

// row is the row of the padded input holding step t of sequence q.
func (b *rnnBatch) row(t, q int) int { return t*b.batch + q }

// copyRows gathers rows (of width w) of x into a [len(rows), w] tensor.
func copyRows(x *tensor.Tensor, rows []int, w int) (*tensor.Tensor, error) {
	y := newTensor(x.DType(), []int{len(rows), w})
	switch x.DType() {
	case tensor.Float32:
		copyRowsOf(y.Float32s(), x.Float32s(), rows, w)
	case tensor.Float64:
		copyRowsOf(y.Float64s(), x.Float64s(), rows, w)
	default:
		return nil, fmt.Errorf("X is %v; expected float32 or float64", x.DType())
	}
	return y, nil
}

func copyRowsOf[T tensor.Float](dst, src []T, rows []int, w int) {
	for i, r := range rows {
		copy(dst[i*w:(i+1)*w], src[r*w:(r+1)*w])
	}
}

// transposeInput makes a batch-first X [batch, seq, in] time-major.
func transposeInput(x *tensor.Tensor, batchFirst bool) (*tensor.Tensor, error) {
	if !batchFirst {
		return x, nil
	}
	return x.Transpose(1, 0, 2)
}

// unpack scatters one direction's ragged states [total, cols] (the column
// block from..from+h) into Y [seq, dirs, batch, h] at direction d (zeros
// at padded steps), and returns that direction's final states [batch, h]
// (init's row for an empty sequence; init may be nil for zeros). y nil
// keeps only the final states.
func (b *rnnBatch) unpack(states *tensor.Tensor, from, h, d, dirs int, reverse bool, y *tensor.Tensor, init *tensor.Tensor) *tensor.Tensor {
	final := newTensor(states.DType(), []int{b.batch, h})
	switch states.DType() {
	case tensor.Float32:
		unpackOf(b, states.Float32s(), states.Dim(1), from, h, d, dirs, reverse, floatsOrNil[float32](y), final.Float32s(), floatsOrNil[float32](init))
	case tensor.Float64:
		unpackOf(b, states.Float64s(), states.Dim(1), from, h, d, dirs, reverse, floatsOrNil[float64](y), final.Float64s(), floatsOrNil[float64](init))
	}
	return final
}

func floatsOrNil[T tensor.Float](t *tensor.Tensor) []T {
	if t == nil {
		return nil
	}
	return tensor.Data[T](t)
}

func unpackOf[T tensor.Float](b *rnnBatch, s []T, cols, from, h, d, dirs int, reverse bool, y, final, init []T) {
	for q := range b.batch {
		for t := 0; y != nil && t < b.lens[q]; t++ {
			src := s[(b.offsets[q]+t)*cols+from:]
			copy(y[((t*dirs+d)*b.batch+q)*h:][:h], src[:h])
		}
		switch {
		case b.lens[q] == 0 && init != nil:
			copy(final[q*h:(q+1)*h], init[q*h:(q+1)*h])
		case b.lens[q] == 0:
		case reverse:
			copy(final[q*h:(q+1)*h], s[b.offsets[q]*cols+from:][:h])
		default:
			copy(final[q*h:(q+1)*h], s[(b.offsets[q+1]-1)*cols+from:][:h])
		}
	}
}

// stateOf is direction d of an initial state [dirs, batch, H] (with
// batchFirst, [batch, dirs, H]), or nil.
func stateOf(s *tensor.Tensor, d int, batchFirst bool) (*tensor.Tensor, error) {
	if s == nil {
		return nil, nil
	}
	if batchFirst {
		if s.Rank() != 3 {
			return nil, fmt.Errorf("initial state is %v; expected [batch, dirs, hidden]", s.Shape())
		}
		var err error
		if s, err = s.Transpose(1, 0, 2); err != nil {
			return nil, err
		}
	}
	if s.Rank() != 3 || d >= s.Dim(0) {
		return nil, fmt.Errorf("initial state is %v; expected [dirs, batch, hidden]", s.Shape())
	}
	sd, err := s.Slice(0, d, d+1)
	if err != nil {
		return nil, err
	}
	return sd.Reshape(s.Dim(1), s.Dim(2))
}

// finishY lays Y out as the node's layout asks: [seq, dirs, batch, H], or
// [batch, seq, dirs, H] for batch first; the final states likewise
// [dirs, batch, H] or [batch, dirs, H].
func finishY(y *tensor.Tensor, finals []*tensor.Tensor, batchFirst bool) ([]*tensor.Tensor, error) {
	out := []*tensor.Tensor{y}
	for _, f := range finals {
		out = append(out, f)
	}
	if !batchFirst {
		return out, nil
	}
	var err error
	if out[0], err = ops.Transpose(y, 2, 0, 1, 3); err != nil {
		return nil, err
	}
	for i := 1; i < len(out); i++ {
		if out[i], err = ops.Transpose(out[i], 1, 0, 2); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// stackDirs stacks per-direction [batch, H] states into [dirs, batch, H].
func stackDirs(states []*tensor.Tensor) (*tensor.Tensor, error) {
	parts := make([]*tensor.Tensor, len(states))
	for i, s := range states {
		var err error
		if parts[i], err = s.Reshape(1, s.Dim(0), s.Dim(1)); err != nil {
			return nil, err
		}
	}
	return tensor.Concat(0, parts...)
}
