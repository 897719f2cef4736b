package ops

import (
	"fmt"

	"github.com/plumbml/plumb/tensor"
)

// BroadcastShapes returns the NumPy broadcast of the given shapes: aligned at
// the trailing axis, each dim equal or 1.
func BroadcastShapes(shapes ...tensor.Shape) (tensor.Shape, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make(tensor.Shape, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		for i, d := range s {
			j := rank - len(s) + i
			switch {
			case d == out[j] || d == 1:
			case out[j] == 1:
				out[j] = d
			default:
				return nil, fmt.Errorf("shapes %v do not broadcast (axis %d: %d vs %d)", shapes, j, out[j], d)
			}
		}
	}
	return out, nil
}

// bcastStrides returns, for each axis of out, the stride of an input of
// shape s read under broadcasting (0 on axes where s has size 1 or is absent).
func bcastStrides(s, out tensor.Shape) []int {
	st := make([]int, len(out))
	in := s.Strides()
	for i, d := range s {
		j := len(out) - len(s) + i
		if d != 1 {
			st[j] = in[i]
		}
	}
	return st
}

// bcastRuns walks out in row-major order and calls fn once per innermost run:
// o is the flat output index of the run's start, offs[k] the start offset in
// input k, step[k] input k's stride along the innermost axis, n the run length.
func bcastRuns(out tensor.Shape, strides [][]int, fn func(o int, offs, step []int, n int)) {
	size := out.Size()
	if size == 0 {
		return
	}
	if len(out) == 0 {
		fn(0, make([]int, len(strides)), make([]int, len(strides)), 1)
		return
	}
	last := len(out) - 1
	n := out[last]
	offs := make([]int, len(strides))
	step := make([]int, len(strides))
	for k := range strides {
		step[k] = strides[k][last]
	}
	idx := make([]int, len(out))
	for o := 0; o < size; o += n {
		fn(o, offs, step, n)
		for a := last - 1; a >= 0; a-- {
			idx[a]++
			for k := range strides {
				offs[k] += strides[k][a]
			}
			if idx[a] < out[a] {
				break
			}
			for k := range strides {
				offs[k] -= strides[k][a] * idx[a]
			}
			idx[a] = 0
		}
	}
}

// sumTo reduces g (of the broadcast shape) to shape s by summing over the
// axes that broadcasting expanded: the gradient of a broadcast input.
func sumTo(g *tensor.Tensor, s tensor.Shape) *tensor.Tensor {
	if g.Shape().Equal(s) {
		return g
	}
	out := tensor.Zeros(g.DType(), s...)
	st := [][]int{bcastStrides(s, g.Shape())}
	switch g.DType() {
	case tensor.Float32:
		sumToKernel(g.Float32s(), out.Float32s(), g.Shape(), st)
	case tensor.Float64:
		sumToKernel(g.Float64s(), out.Float64s(), g.Shape(), st)
	}
	return out
}

func sumToKernel[T tensor.Float](g, out []T, shape tensor.Shape, st [][]int) {
	bcastRuns(shape, st, func(o int, offs, step []int, n int) {
		p, s := offs[0], step[0]
		for i := 0; i < n; i++ {
			out[p+i*s] += g[o+i]
		}
	})
}
