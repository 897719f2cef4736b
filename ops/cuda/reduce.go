//go:build cuda

package cuda

import (
	"slices"

	"github.com/plumbml/plumb/tensor"
)

// reduceCodes number the reductions as the RedOp enum of
// kernels/reduce.cu does; redTies counts the elements equal to the
// extreme, for the gradient of max and min.
var reduceCodes = map[string]int{"sum": 0, "mean": 1, "max": 2, "min": 3, "variance": 4, "logsumexp": 5}

const (
	redTies    = 6
	redMaxDims = 16 // RED_MAXDIMS of kernels/reduce.cu
	redTile    = 32 // RED_TILE
	redLanes   = 8  // RED_LANES
)

// The forward paths of kernels/reduce.cu.
const (
	redRows  = iota // reduce_rows: a block per output
	redCols         // reduce_cols: a thread per output
	redTiles        // reduce_part + reduce_fin: tiles of adjacent outputs over chunks of the reduced elements
)

// reduceLauncher is one application of ops.ReduceOp(name, axes, keepDims) on the
// device: sum, mean, max, min, variance (population, ddof 0) or logsumexp
// of x over axes, with TF's semantics as ops: negative axes count from the
// end, no axes means every axis, keepDims keeps each reduced axis with
// size 1, and an empty axis gives TF's identities (sum 0, max -Inf, min
// +Inf, logsumexp -Inf, mean and variance NaN). Sums run in double.
//
// Gradients follow TF as ops does: sum and mean broadcast the upstream
// gradient back (mean divided by the count), max and min split it equally
// among the tied extremes, variance has 2(x - mean)/N and logsumexp
// exp(x - y). Forward keeps references to x and to its output, which
// must stay unchanged until Backward, and for variance saves the means;
// Free releases them.
type reduceLauncher struct {
	d        *Device
	name     string
	axes     []int
	keepDims bool

	// Saved by Forward.
	x, y    *Buffer
	mean    *Buffer // variance: each output's mean, float64
	geo     []int64 // kernels/reduce.cu's RGeo
	bgeo    []int64 // reduce_bwd's dims of x with their output strides
	nout, n int
	path    int // redRows, redCols or redTiles
}

// reduceOp returns the op of ops.ReduceOp(name, axes, keepDims) on the
// device; an unknown name is an error of Forward.
func (d *Device) reduceOp(name string, axes []int, keepDims bool) *reduceLauncher {
	return &reduceLauncher{d: d, name: name, axes: slices.Clone(axes), keepDims: keepDims}
}

// plan checks the axes as ops does and returns the output shape, saving
// the merged geometry: axes of size 1 are dropped and adjacent axes that
// are both reduced or both kept merge into one, so a reduction over the
// last axis is [kept, reduced] whatever x's rank.
func (o *reduceLauncher) plan(x *Buffer) (tensor.Shape, error) {
	in := []*Buffer{x}
	rank := len(x.shape)
	reduced := make([]bool, rank)
	for _, a := range o.axes { // in range and distinct: ops.Dispatch checked them (reduceOp.Check)
		ax, err := tensor.Axis(a, rank)
		if err != nil {
			return nil, err
		}
		reduced[ax] = true
	}
	out := tensor.Shape{}
	type dim struct {
		size    int
		reduced bool
	}
	var dims []dim
	for ax, s := range x.shape {
		red := len(o.axes) == 0 || reduced[ax]
		switch {
		case !red:
			out = append(out, s)
		case o.keepDims:
			out = append(out, 1)
		}
		if s == 1 {
			continue
		}
		if k := len(dims) - 1; k >= 0 && dims[k].reduced == red {
			dims[k].size *= s
			continue
		}
		dims = append(dims, dim{s, red})
	}
	var kd, ks, rd, rs []int64
	o.nout, o.n = 1, 1
	stride, ostride := 1, 1
	ostrides := make([]int64, len(dims))
	for k := len(dims) - 1; k >= 0; k-- {
		if dims[k].reduced {
			rd, rs = append(rd, int64(dims[k].size)), append(rs, int64(stride))
			o.n *= dims[k].size
		} else {
			kd, ks = append(kd, int64(dims[k].size)), append(ks, int64(stride))
			ostrides[k] = int64(ostride)
			ostride *= dims[k].size
			o.nout *= dims[k].size
		}
		stride *= dims[k].size
	}
	if len(dims) > redMaxDims {
		return nil, opError(o.name, in, "the CUDA reduction takes at most %d alternating runs of reduced and kept axes, got %d", redMaxDims, len(dims))
	}
	slices.Reverse(kd)
	slices.Reverse(ks)
	slices.Reverse(rd)
	slices.Reverse(rs)
	o.geo = slices.Concat([]int64{int64(len(kd)), int64(len(rd))}, kd, ks, rd, rs)
	o.bgeo = []int64{int64(len(dims))}
	for _, d := range dims {
		o.bgeo = append(o.bgeo, int64(d.size))
	}
	o.bgeo = append(o.bgeo, ostrides...)
	// Neighbouring threads read neighbouring elements on every path: a
	// block per output when the innermost run is reduced and long, a
	// thread per output when it is reduced and short, and tiles of
	// adjacent outputs when it is kept.
	switch innerReduced := len(dims) > 0 && dims[len(dims)-1].reduced; {
	case innerReduced && o.n >= 32:
		o.path = redRows
	case innerReduced:
		o.path = redCols
	default:
		o.path = redTiles
	}
	return out, nil
}

// redBlocks is about the number of blocks the tiled path aims for: enough
// to fill a large GPU several times over, without partial sums of more
// than a few elements per output when there are many outputs.
const redBlocks = 2048

// chunks returns how the tiled path cuts the n reduced elements: chunks
// of chunk elements each, at least one chunk.
func (o *reduceLauncher) chunks() (chunks, chunk int) {
	tiles := (o.nout + redTile - 1) / redTile
	chunks = max(1, min((redBlocks+tiles-1)/tiles, (o.n+redTile-1)/redTile))
	chunk = max(1, (o.n+chunks-1)/chunks)
	return max(1, (o.n+chunk-1)/chunk), chunk
}

// launch runs the forward path for op code, or with redTies the count of
// the elements equal to the forward output y into aux; y and aux are as
// reduce_rows takes them. Called inside do.
func (o *reduceLauncher) launch(code int, y, aux *Buffer) error {
	d := o.d
	geo, err := d.upIndex(o.geo)
	if err != nil {
		return err
	}
	defer geo.Free()
	switch o.path {
	case redRows:
		return d.launch("reduce_rows", rowGrid(o.nout), rowBlock(o.n), i64(code), ptr(o.x), ptr(y), ptr(aux), ptr(geo), i64(o.nout), i64(o.n))
	case redCols:
		return d.launch("reduce_cols", grid1(o.nout), block1, i64(code), ptr(o.x), ptr(y), ptr(aux), ptr(geo), i64(o.nout), i64(o.n))
	}
	chunks, chunk := o.chunks()
	part, err := d.newBuffer(tensor.Float64, tensor.Shape{chunks * o.nout})
	if err != nil {
		return err
	}
	defer part.Free()
	// c holds variance's means (aux, kept for Backward) or logsumexp's
	// shifts between the two passes.
	c := aux
	if code == reduceCodes["logsumexp"] {
		if c, err = d.newBuffer(tensor.Float64, tensor.Shape{o.nout}); err != nil {
			return err
		}
		defer c.Free()
	}
	passes := 1
	if code == reduceCodes["variance"] || code == reduceCodes["logsumexp"] {
		passes = 2
	}
	grid, block := [3]int{(o.nout + redTile - 1) / redTile, chunks, 1}, [3]int{redTile, redLanes, 1}
	for pass := range passes {
		if err := d.launch("reduce_part", grid, block, i64(code), i64(pass), ptr(o.x), ptr(y), ptr(c), ptr(geo),
			i64(o.nout), i64(o.n), i64(chunk), ptr(part)); err != nil {
			return err
		}
		if err := d.launch("reduce_fin", grid1(o.nout), block1, i64(code), i64(pass), ptr(part), i64(chunks),
			i64(o.nout), i64(o.n), ptr(y), ptr(aux), ptr(c)); err != nil {
			return err
		}
	}
	return nil
}

// Forward returns the reduction of x; see Reduce.
func (o *reduceLauncher) Forward(x *Buffer) (*Buffer, error) {
	in := []*Buffer{x}
	if err := o.d.checkInputs(o.name, in...); err != nil {
		return nil, err
	}
	code, ok := reduceCodes[o.name]
	if !ok {
		return nil, opError(o.name, in, "unknown reduction %q; want sum, mean, max, min, variance or logsumexp", o.name)
	}
	o.Free()
	shape, err := o.plan(x)
	if err != nil {
		return nil, err
	}
	o.x = x
	d := o.d
	var y *Buffer
	err = d.do(func() error {
		var err error
		if y, err = d.newBuffer(tensor.Float32, shape); err != nil {
			return err
		}
		if o.name == "variance" {
			if o.mean, err = d.newBuffer(tensor.Float64, tensor.Shape{o.nout}); err != nil {
				return err
			}
		}
		if o.nout == 0 {
			return nil
		}
		return o.launch(code, y, o.mean)
	})
	if err != nil {
		o.Free()
		freeAll(y)
		return nil, err
	}
	o.y = y
	return y, nil
}

// Backward returns the gradient of x for the upstream gradient gout of
// the output's shape; see Reduce.
func (o *reduceLauncher) Backward(gout *Buffer) (*Buffer, error) {
	in := []*Buffer{o.x, o.y, gout}
	if err := o.d.checkInputs(o.name, in...); err != nil {
		return nil, err
	}
	d, code, total := o.d, reduceCodes[o.name], o.x.Size()
	var dx *Buffer
	err := d.do(func() error {
		var err error
		if dx, err = d.newBuffer(tensor.Float32, o.x.shape); err != nil || total == 0 {
			return err
		}
		aux := o.mean
		if o.name == "max" || o.name == "min" {
			ties, err := d.newBuffer(tensor.Float64, tensor.Shape{o.nout})
			if err != nil {
				return err
			}
			defer ties.Free()
			if err := o.launch(redTies, o.y, ties); err != nil {
				return err
			}
			aux = ties
		}
		bgeo, err := d.upIndex(o.bgeo)
		if err != nil {
			return err
		}
		defer bgeo.Free()
		return d.launch("reduce_bwd", grid1(total), block1, i64(code), ptr(o.x), ptr(o.y), ptr(gout), ptr(aux),
			ptr(bgeo), ptr(dx), i64(total), i64(o.n))
	})
	return done(dx, err)
}

// Free releases the means Forward saved for variance and drops its
// references to x and the output.
func (o *reduceLauncher) Free() {
	freeAll(o.mean)
	o.mean, o.x, o.y = nil, nil, nil
}

// colSum writes y[j] = Σ_i x[i, j] for the first n·m elements of x read as
// [n, m] (a bias gradient, or per-image partial sums); called inside do.
// The reduction's planner picks its path from the shape: a thread per
// column when n is short (a few images), the tiled path when it is long
// (a sequence batch's rows). Both accumulate in double.
func (d *Device) colSum(x *Buffer, n, m int, y *Buffer) error {
	switch {
	case m == 0:
		return nil
	case n == 0:
		return d.zero(y)
	}
	o := d.reduceOp("sum", []int{0}, false)
	xv := &Buffer{dev: d, ptr: x.ptr, dtype: tensor.Float32, shape: tensor.Shape{n, m}}
	if _, err := o.plan(xv); err != nil {
		return err
	}
	o.x = xv
	return o.launch(reduceCodes["sum"], y, nil)
}
