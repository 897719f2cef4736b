package ops

import (
	"fmt"

	"github.com/plumbml/plumb/internal/scratch"
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

// broadcastsTo reports whether out is the NumPy broadcast of a and b
// (BroadcastShapes), without building it.
func broadcastsTo(out, a, b tensor.Shape) bool {
	rank := max(len(a), len(b))
	if len(out) != rank {
		return false
	}
	dim := func(s tensor.Shape, j int) int {
		if i := j - rank + len(s); i >= 0 {
			return s[i]
		}
		return 1
	}
	for j := range rank {
		da, db := dim(a, j), dim(b, j)
		want := da
		switch {
		case da == db, db == 1:
		case da == 1:
			want = db
		default:
			return false
		}
		if out[j] != want {
			return false
		}
	}
	return true
}

// bcastStrides returns, for each axis of out, the stride of an input of
// shape s read under broadcasting (0 on axes where s has size 1 or is absent).
func bcastStrides(s, out tensor.Shape) []int {
	return bcastStridesInto(make([]int, len(out)), s, out)
}

// bcastStridesInto is bcastStrides into st, of len(out) elements.
func bcastStridesInto(st []int, s, out tensor.Shape) []int {
	clear(st)
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 1 {
			st[len(out)-len(s)+i] = acc
		}
		acc *= s[i]
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
	buf := scratch.Get[int](2*len(strides) + len(out)) // fn may keep nothing, so a pooled buffer will do
	defer scratch.Put(buf)
	offs, step, idx := (*buf)[:len(strides)], (*buf)[len(strides):2*len(strides)], (*buf)[2*len(strides):]
	clear(*buf)
	for k := range strides {
		step[k] = strides[k][last]
	}
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
