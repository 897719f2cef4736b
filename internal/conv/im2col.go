package conv

import (
	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/scratch"
	"github.com/plumbml/plumb/tensor"
)

// The im2col kernels take every convolution the channels-last and
// depthwise ones do not (grouped ones, and ungrouped ones with too few
// channels, such as MNIST's one-channel first layer): each image is
// lowered to a column matrix (im2col.Im2Col, as in Caffe) and multiplied
// by the weights of each group in one GEMM. With og outputs and kg =
// C/groups·KH·KW lowered input rows per group and p = OH·OW pixels, image
// i and group k compute
//
//	im2colData:         y[i,k] (og×p)  = w[k] (og×kg) · im2col(x[i])[k] (kg×p)
//	im2colDataAdjoint:  x[i]          += col2im(w[k]ᵀ (kg×og) · y[i,k] (og×p))
//	im2colFilter:       dw[k] (og×kg) += y[i,k] (og×p) · im2col(x[i])[k]ᵀ (p×kg)

// im2colAlg is the im2col algorithm; its passes add the bias after the
// GEMMs.
type im2colAlg[T tensor.Float] struct{}

func (im2colAlg[T]) Forward(g Geom, x, w, b, y []T) {
	im2colData(g, x, w, y)
	if b != nil {
		addBias(y, b, g.N, g.Cout, g.Cols())
	}
}

func (im2colAlg[T]) DataGrad(g Geom, y, w, b, x []T) {
	im2colDataAdjoint(g, y, w, x)
	if b != nil {
		addBias(x, b, g.N, g.C, g.H*g.W)
	}
}

func (im2colAlg[T]) FilterGrad(g Geom, x, y, dw []T) { im2colFilter(g, x, y, dw) }

// im2colData writes conv(x, w) into y for any groups, one GEMM per image
// and group.
func im2colData[T tensor.Float](g Geom, x, w, y []T) {
	par.ForBatchOf(g.N, im2colDataJob[T]{g: g, x: x, w: w, y: y})
}

// im2colDataJob is im2colData's loop over runs of images, and
// im2colDataAdjoint's when adjoint (y read, x written).
type im2colDataJob[T tensor.Float] struct {
	g       Geom
	x, w, y []T
	adjoint bool
}

func (j *im2colDataJob[T]) Range(_, lo, hi int) {
	g, x, w, y := j.g, j.x, j.w, j.y
	og, kg, p, chw := g.Cout/g.Groups, g.Rows()/g.Groups, g.Cols(), g.C*g.H*g.W
	buf := scratch.Get[T](g.Rows() * p)
	defer scratch.Put(buf)
	col := *buf
	for i := lo; i < hi; i++ {
		if j.adjoint {
			for k := 0; k < g.Groups; k++ {
				gemm.Gemm(true, false, kg, p, og, 1, w[k*og*kg:], kg, y[(i*g.Cout+k*og)*p:], p, 0, col[k*kg*p:], p)
			}
			im2col.Col2Im(g.Geom, col, x[i*chw:(i+1)*chw])
			continue
		}
		im2col.Im2Col(g.Geom, x[i*chw:], col)
		for k := 0; k < g.Groups; k++ {
			gemm.Gemm(false, false, og, p, kg, 1, w[k*og*kg:], kg, col[k*kg*p:], p, 0, y[(i*g.Cout+k*og)*p:], p)
		}
	}
}

// im2colDataAdjoint writes convᵀ(y, w) into x for any groups.
func im2colDataAdjoint[T tensor.Float](g Geom, y, w, x []T) {
	par.ForBatchOf(g.N, im2colDataJob[T]{g: g, x: x, w: w, y: y, adjoint: true})
}

// im2colFilter adds the filter gradient into dw for any groups. Each goroutine sums its
// images into a buffer of its own (pooled), added at the end.
func im2colFilter[T tensor.Float](g Geom, x, y, dw []T) {
	og, kg, p, chw := g.Cout/g.Groups, g.Rows()/g.Groups, g.Cols(), g.C*g.H*g.W
	part := make([]*[]T, par.BatchWorkers(g.N))
	par.ForBatch(g.N, func(worker, lo, hi int) {
		acc := dw
		if worker > 0 {
			part[worker] = scratch.Get[T](len(dw))
			acc = *part[worker]
			clear(acc)
		}
		buf := scratch.Get[T](g.Rows() * p)
		defer scratch.Put(buf)
		col := *buf
		for i := lo; i < hi; i++ {
			im2col.Im2Col(g.Geom, x[i*chw:], col)
			for k := 0; k < g.Groups; k++ {
				gemm.Gemm(false, true, og, kg, p, 1, y[(i*g.Cout+k*og)*p:], p, col[k*kg*p:], p, 1, acc[k*og*kg:], kg)
			}
		}
	})
	for _, acc := range part[1:] {
		for j, v := range *acc {
			dw[j] += v
		}
		scratch.Put(acc)
	}
}
