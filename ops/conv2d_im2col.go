package ops

import (
	"github.com/plumbml/plumb/internal/gemm"
	"github.com/plumbml/plumb/internal/im2col"
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/tensor"
)

// The im2col kernels take every convolution the channels-last and
// depthwise ones do not (grouped ones, and ungrouped ones with too few
// channels, such as MNIST's one-channel first layer): each image is
// lowered to a column matrix (im2col.Im2Col, as in Caffe) and multiplied
// by the weights of each group in one GEMM.

// im2colData is convData for any groups, one GEMM per image and group.
func im2colData[T tensor.Float](g convGeom, x, w, y []T) {
	og, kg, p, chw := g.cout/g.groups, g.Rows()/g.groups, g.Cols(), g.C*g.H*g.W
	par.ForBatch(g.n, func(_, lo, hi int) {
		buf := getScratch[T](g.Rows() * p)
		defer putScratch(buf)
		col := *buf
		for i := lo; i < hi; i++ {
			im2col.Im2Col(g.Geom, x[i*chw:], col)
			for k := 0; k < g.groups; k++ {
				gemm.Gemm(false, false, og, p, kg, 1, w[k*og*kg:], kg, col[k*kg*p:], p, 0, y[(i*g.cout+k*og)*p:], p)
			}
		}
	})
}

// im2colDataAdjoint is convDataAdjoint for any groups.
func im2colDataAdjoint[T tensor.Float](g convGeom, y, w, x []T) {
	og, kg, p, chw := g.cout/g.groups, g.Rows()/g.groups, g.Cols(), g.C*g.H*g.W
	par.ForBatch(g.n, func(_, lo, hi int) {
		buf := getScratch[T](g.Rows() * p)
		defer putScratch(buf)
		col := *buf
		for i := lo; i < hi; i++ {
			for k := 0; k < g.groups; k++ {
				gemm.Gemm(true, false, kg, p, og, 1, w[k*og*kg:], kg, y[(i*g.cout+k*og)*p:], p, 0, col[k*kg*p:], p)
			}
			im2col.Col2Im(g.Geom, col, x[i*chw:(i+1)*chw])
		}
	})
}

// im2colFilter is convFilter for any groups. Each goroutine sums its
// images into a buffer of its own (pooled), added at the end.
func im2colFilter[T tensor.Float](g convGeom, x, y, dw []T) {
	og, kg, p, chw := g.cout/g.groups, g.Rows()/g.groups, g.Cols(), g.C*g.H*g.W
	part := make([]*[]T, par.BatchWorkers(g.n))
	par.ForBatch(g.n, func(worker, lo, hi int) {
		acc := dw
		if worker > 0 {
			part[worker] = getScratch[T](len(dw))
			acc = *part[worker]
			clear(acc)
		}
		buf := getScratch[T](g.Rows() * p)
		defer putScratch(buf)
		col := *buf
		for i := lo; i < hi; i++ {
			im2col.Im2Col(g.Geom, x[i*chw:], col)
			for k := 0; k < g.groups; k++ {
				gemm.Gemm(false, true, og, kg, p, 1, y[(i*g.cout+k*og)*p:], p, col[k*kg*p:], p, 1, acc[k*og*kg:], kg)
			}
		}
	})
	for _, acc := range part[1:] {
		for j, v := range *acc {
			dw[j] += v
		}
		putScratch(acc)
	}
}
