package ops

import "github.com/plumbml/plumb/internal/scratch"

// getScratch returns a pooled buffer of n elements, contents undefined,
// from the kernels' scratch pools (internal/scratch, which internal/conv
// shares); putScratch gives it back.
func getScratch[E scratch.Elem](n int) *[]E { return scratch.Get[E](n) }

func putScratch[E scratch.Elem](s *[]E) { scratch.Put(s) }
