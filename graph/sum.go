package graph

import (
	"github.com/plumbml/plumb/internal/par"
	"github.com/plumbml/plumb/internal/vec"
	"github.com/plumbml/plumb/tensor"
)

// sumInto sets dst = a + b element-wise (dst may be a), through the vector
// loop, in chunks over the cores once the gradients are large
// (par.Elements): a decoder's weights gather one gradient term per step, and
// adding them on one core left the other idle. Each element's sum is its
// own, so the bits do not depend on the cores.
func sumInto[T tensor.Float](dst, a, b []T) {
	if len(dst) < par.MinWork { // inline: the closure below escapes, and small sums allocate nothing
		vec.Sum(dst, a, b)
		return
	}
	par.Elements(len(dst), func(lo, hi int) { vec.Sum(dst[lo:hi], a[lo:hi], b[lo:hi]) })
}
