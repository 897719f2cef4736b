package ops

import (
	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

func init() {
	register(Spec{Name: "linear_softmax_cross_entropy", Inputs: []string{"x", "w", "b", "labels"}, Grads: []int{0, 1, 2},
		Make: MakeOp(func(a LinearSoftmaxCrossEntropyAttrs) Op { return LinearSoftmaxCrossEntropyOp(a.ChunkRows) }), CUDA: DeviceFallback})
}

// LinearSoftmaxCrossEntropyAttrs are linear_softmax_cross_entropy's
// attributes: the rows per chunk (0: its default).
type LinearSoftmaxCrossEntropyAttrs struct {
	ChunkRows int `json:"chunk_rows"`
}

// linearXentChunkElems is the size of the logits buffer the op works in,
// in elements: rows of the output projection are taken this many logits
// at a time (4 MiB of float32, a few hundred rows of a 10,000-word
// vocabulary).
const linearXentChunkElems = 1 << 20

// linearXentOp is the output projection fused with the softmax
// cross-entropy, in chunks of rows.
type linearXentOp struct {
	chunk          int              // rows per chunk; 0: from linearXentChunkElems
	rows           []int            // the rows with a label, in order; nil when every row has one
	labels         []int            // the labels of those (kept) rows
	rowMax, logSum []float64        // per kept row
	eager          [3]bool          // gradients of x, W and b that Forward computes (LinearSoftmaxCrossEntropyEagerOp)
	unit           []*tensor.Tensor // those gradients for an upstream gradient of 1, until Backward takes them
}

// LinearSoftmaxCrossEntropyOp returns the mean softmax cross-entropy of
// the logits x·W + b (x [N, D], W [D, V], b [V]) against int32 or int64
// labels [N], over the rows whose label is in [0, V); a negative label
// marks a row to ignore (padding; PyTorch's ignore_index, here any
// negative id). The output is a scalar: Σ_kept (logsumexp(z_i) − z_i[l_i])
// / kept, 0 when every row is ignored (a batch of padding adds nothing).
// An empty batch (N = 0) is an error naming the op and the shapes, as for
// the other losses' LossMean.
//
// Only the kept rows are projected: when some rows are ignored, the op
// gathers the others into a dense [kept, D] matrix first, so padding
// costs no GEMM work, and their dx rows are zero.
//
// The [N, V] logits are never held whole: Forward computes them chunkRows
// rows at a time (0: rows of about a million logits), keeping only each
// row's max and log-sum-exp, and Backward recomputes each chunk's logits
// and turns them into softmax − one-hot in place, then dx = dz·Wᵀ, dW +=
// xᵀ·dz and db += Σ dz for the chunk. So the op's memory is one chunk
// of logits instead of the logits, their softmax and their gradient
// (three [N, V] tensors), for the cost of a second x·W.
func LinearSoftmaxCrossEntropyOp(chunkRows int) Op { return &linearXentOp{chunk: chunkRows} }

// LinearSoftmaxCrossEntropyEagerOp is LinearSoftmaxCrossEntropyOp for a
// loss that will be differentiated: Forward also turns each chunk's
// logits into softmax − one-hot while it holds them and takes the
// gradients of the inputs want marks (x, W, b) for an upstream gradient
// of 1, and the first Backward only scales them by the upstream gradient.
// That saves the second x·W of the plain op: training runs the
// projection's three GEMMs (logits, dx, dW), as an unfused layer does,
// still without the [N, V] logits. Use the plain op when no Backward
// follows (evaluation), where the gradients would be wasted work.
func LinearSoftmaxCrossEntropyEagerOp(chunkRows int, want [3]bool) Op {
	return &linearXentOp{chunk: chunkRows, eager: want}
}

// LinearSoftmaxCrossEntropy returns the mean cross-entropy of x·W + b
// against labels; see LinearSoftmaxCrossEntropyOp.
func LinearSoftmaxCrossEntropy(x, w, b, labels *tensor.Tensor) (*tensor.Tensor, error) {
	return run(LinearSoftmaxCrossEntropyOp(0), x, w, b, labels)
}

func (o *linearXentOp) Name() string { return "linear_softmax_cross_entropy" }

func (o *linearXentOp) Forward(in []*tensor.Tensor) (*tensor.Tensor, error) {
	const name = "linear_softmax_cross_entropy"
	if _, err := checkFloat(name, in[:min(len(in), 3)], 3); err != nil {
		return nil, err
	}
	if err := checkArity(name, in, 4); err != nil {
		return nil, err
	}
	x, w, b := in[0], in[1], in[2]
	if x.Rank() != 2 || w.Rank() != 2 || w.Dim(0) != x.Dim(1) || !b.Shape().Equal(tensor.Shape{w.Dim(1)}) || w.Dim(1) < 1 {
		return nil, Errorf(name, in, "want x [N, D], W [D, V] and b [V] with V >= 1")
	}
	n, v := x.Dim(0), w.Dim(1)
	labels, err := in[3].Ints()
	if err != nil || in[3].Rank() != 1 || len(labels) != n {
		return nil, Errorf(name, in, "want int32 or int64 labels [%d]", n)
	}
	if n == 0 {
		return nil, Errorf(name, in, "empty batch: the mean of no per-example losses is undefined; want x [N, D] with N >= 1")
	}
	o.rows, o.labels = make([]int, 0, n), make([]int, 0, n)
	for i, l := range labels {
		if l >= v {
			return nil, Errorf(name, in, "label %d at row %d out of range [0, %d) (negative ids are ignored)", l, i, v)
		}
		if l >= 0 {
			o.rows, o.labels = append(o.rows, i), append(o.labels, l)
		}
	}
	kept := len(o.labels)
	if kept == n {
		o.rows = nil
	}
	if o.chunk <= 0 {
		o.chunk = max(1, linearXentChunkElems/v)
	}
	o.rowMax, o.logSum = make([]float64, kept), make([]float64, kept)
	loss := make([]float64, kept)
	o.unit = nil
	var rw []float64
	if o.eager != [3]bool{} && kept > 0 {
		o.unit = wantedGrads(in[:3], o.eager[:])
		rw = o.rowWeights(1)
	}
	switch x.DType() {
	case tensor.Float32:
		linearXentForward(o, x.Float32s(), w.Float32s(), b.Float32s(), x.Dim(1), v, loss, rw)
	case tensor.Float64:
		linearXentForward(o, x.Float64s(), w.Float64s(), b.Float64s(), x.Dim(1), v, loss, rw)
	}
	sum := 0.0
	for _, l := range loss {
		sum += l
	}
	out := tensor.Zeros(x.DType())
	if kept > 0 {
		out.SetAt(0, sum/float64(kept))
	}
	return out, nil
}

// projection is W [D, V] packed once for every chunk's products: as
// the logits' B (W) and, when dx is wanted, as dx's (Wᵀ), where each
// gemm.Gemm call would pack it again.
type projection[T tensor.Float] struct {
	w, wt *gemm.PackedB[T]
}

func packProjection[T tensor.Float](w []T, d, v int, transposed bool) projection[T] {
	p := projection[T]{w: gemm.PackB(false, d, v, w, v)}
	if transposed {
		p.wt = gemm.PackB(true, v, d, w, v)
	}
	return p
}

// chunkLogits writes the logits x[lo:hi]·W + b into z.
func chunkLogits[T tensor.Float](x, b, z []T, lo, hi, d, v int, p projection[T]) {
	for r := range hi - lo {
		copy(z[r*v:(r+1)*v], b)
	}
	gemm.GemmPacked(false, hi-lo, 1, x[lo*d:hi*d], d, p.w, 1, z, v)
}

// keptRows returns the rows of x [N, d] that have a label, densely (x
// itself when every row has one), and the buffer their dx goes to: dx
// itself then, a [kept, d] buffer to scatter otherwise (nil when dx is).
func keptRows[T tensor.Float](o *linearXentOp, x, dx []T, d int) (xk, dxk []T) {
	if o.rows == nil {
		return x, dx
	}
	xk = make([]T, len(o.rows)*d)
	gatherKernel(x, xk, o.rows, 1, len(x)/d, d)
	if dx != nil {
		dxk = make([]T, len(o.rows)*d)
	}
	return xk, dxk
}

// scatterKept copies the kept rows' gradients dxk into their rows of dx
// (zeros until then, each written once), where keptRows gave a buffer of
// their own.
func scatterKept[T tensor.Float](o *linearXentOp, dx, dxk []T, d int) {
	if o.rows == nil || dx == nil {
		return
	}
	for k, r := range o.rows {
		copy(dx[r*d:(r+1)*d], dxk[k*d:(k+1)*d])
	}
}

// linearXentForward computes each chunk's logits and losses over the kept
// rows and, when o.unit holds gradients to take (weights rw), their share
// of them.
func linearXentForward[T tensor.Float](o *linearXentOp, x, w, b []T, d, v int, loss, rw []float64) {
	n := len(o.labels)
	if n == 0 {
		return
	}
	var dx, dxk []T
	if o.unit != nil {
		dx = floats[T](o.unit[0])
	}
	x, dxk = keptRows(o, x, dx, d)
	z := make([]T, min(o.chunk, n)*v)
	var dz []T
	if o.unit != nil {
		dz = make([]T, len(z))
	}
	p := packProjection(w, d, v, dz != nil && dx != nil)
	for lo := 0; lo < n; lo += o.chunk {
		hi := min(lo+o.chunk, n)
		chunkLogits(x, b, z, lo, hi, d, v, p)
		xentKernel(z, nil, o.labels[lo:hi], hi-lo, v, o.rowMax[lo:hi], o.logSum[lo:hi], loss[lo:hi])
		if dz != nil {
			xentGrad(z, nil, o.labels[lo:hi], hi-lo, v, o.rowMax[lo:hi], o.logSum[lo:hi], rw[lo:hi], dz, nil)
			chunkGrads(x, dz, lo, hi, d, v, p, dxk, floats[T](o.unit[1]), floats[T](o.unit[2]))
		}
	}
	scatterKept(o, dx, dxk, d)
}

func (o *linearXentOp) Backward(in []*tensor.Tensor, out, gout *tensor.Tensor, need []bool) ([]*tensor.Tensor, error) {
	if o.unit != nil && o.covers(need) {
		return o.takeUnit(gout.At(0), need), nil
	}
	grads := wantedGrads(in, need)
	grads[3] = nil
	if len(o.labels) == 0 {
		return grads, nil
	}
	rw := o.rowWeights(gout.At(0))
	x, w, b := in[0], in[1], in[2]
	switch x.DType() {
	case tensor.Float32:
		linearXentBackward(o, x.Float32s(), w.Float32s(), b.Float32s(), x.Dim(1), w.Dim(1), rw,
			floats[float32](grads[0]), floats[float32](grads[1]), floats[float32](grads[2]))
	case tensor.Float64:
		linearXentBackward(o, x.Float64s(), w.Float64s(), b.Float64s(), x.Dim(1), w.Dim(1), rw,
			floats[float64](grads[0]), floats[float64](grads[1]), floats[float64](grads[2]))
	}
	return grads, nil
}

// linearXentBackward recomputes each kept chunk's logits, turns them into
// dz (xentGrad) and takes dx, dW and db from it; nil gradients are not
// wanted.
func linearXentBackward[T tensor.Float](o *linearXentOp, x, w, b []T, d, v int, rw []float64, dx, dw, db []T) {
	n := len(o.labels)
	x, dxk := keptRows(o, x, dx, d)
	z, dz := make([]T, min(o.chunk, n)*v), make([]T, min(o.chunk, n)*v)
	p := packProjection(w, d, v, dx != nil)
	for lo := 0; lo < n; lo += o.chunk {
		hi := min(lo+o.chunk, n)
		chunkLogits(x, b, z, lo, hi, d, v, p)
		xentGrad(z, nil, o.labels[lo:hi], hi-lo, v, o.rowMax[lo:hi], o.logSum[lo:hi], rw[lo:hi], dz, nil)
		chunkGrads(x, dz, lo, hi, d, v, p, dxk, dw, db)
	}
	scatterKept(o, dx, dxk, d)
}

// rowWeights returns each kept row's weight in the gradients for an
// upstream gradient g: g/kept, since the loss is their mean.
func (o *linearXentOp) rowWeights(g float64) []float64 {
	rw := make([]float64, len(o.labels))
	for i := range rw {
		rw[i] = g / float64(len(rw))
	}
	return rw
}

// chunkGrads takes the gradients of rows lo..hi from their logits'
// gradient dz: dx = dz·Wᵀ for those rows, dW += xᵀ·dz and db += Σ dz;
// a nil gradient is not wanted.
func chunkGrads[T tensor.Float](x, dz []T, lo, hi, d, v int, p projection[T], dx, dw, db []T) {
	if dx != nil {
		gemm.GemmPacked(false, hi-lo, 1, dz, v, p.wt, 0, dx[lo*d:hi*d], d)
	}
	if dw != nil {
		gemm.Gemm(true, false, d, v, hi-lo, 1, x[lo*d:hi*d], d, dz, v, 1, dw, v)
	}
	if db != nil {
		sumRows(db, dz, hi-lo, v)
	}
}

// covers reports whether Forward took every gradient need asks for.
func (o *linearXentOp) covers(need []bool) bool {
	for i, e := range o.eager {
		if need[i] && (!e || o.unit[i] == nil) {
			return false
		}
	}
	return true
}

// takeUnit hands over the gradients Forward took, scaled by the upstream
// gradient g, keeping only those need asks for. They are handed over
// once: a later Backward recomputes.
func (o *linearXentOp) takeUnit(g float64, need []bool) []*tensor.Tensor {
	grads := make([]*tensor.Tensor, 4)
	for i := range 3 {
		if need[i] {
			grads[i] = o.unit[i]
			if g != 1 {
				scaleAll(grads[i], g)
			}
		}
	}
	o.unit = nil
	return grads
}

// scaleAll multiplies every element of the float tensor t by a, in place.
func scaleAll(t *tensor.Tensor, a float64) {
	switch t.DType() {
	case tensor.Float32:
		vec.Scale(t.Float32s(), a)
	case tensor.Float64:
		vec.Scale(t.Float64s(), a)
	}
}
