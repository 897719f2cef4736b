package infer

import (
	"github.com/plumbml/plumb/tensor"
)

// The memory plan gives every intermediate value a place in one arena per
// call: an offset in the arena's float32 or float64 buffer. Values are
// visited in the order the steps make them; a value takes a free slot (a
// span of the buffer) when one is large enough, the smallest such, else
// the largest free slot grown to fit, else a new slot, and gives its slot
// back after the last step that reads it (the greedy-by-size sharing of
// TFLite's arena planner, simplified to first use). A step's output never
// shares a slot with its own inputs, since their last reader is that step
// and slots come back only after it. A view (reshape) shares its source's
// slot, which lives until the last reader of either.

// slotPlan is the arena layout of a plan.
type slotPlan struct {
	off   []int // per value: offset in its dtype's buffer; -1 when not in the arena
	root  []int // per value: the value whose storage it views (itself for most)
	f32   int   // float32 elements of an arena
	f64   int   // float64 elements
	peak  int   // elements the values would take without sharing
	inArn []bool
}

type slot struct {
	off, size int
	free      bool
}

// planMemory lays out the intermediates of steps over values. view[s]
// says that step s's output is a view of its first input.
func planMemory(values []value, steps []step, outputs []Ref) slotPlan {
	n := len(values)
	p := slotPlan{off: make([]int, n), root: make([]int, n), inArn: make([]bool, n)}
	for i := range p.off {
		p.off[i], p.root[i] = -1, i
	}
	for _, s := range steps {
		if s.view {
			p.root[s.out] = p.root[s.in[0]]
		}
	}
	last := make([]int, n) // per root: the last step that reads it or a view of it
	for i := range last {
		last[i] = -1
	}
	for si, s := range steps {
		for _, r := range s.in {
			last[p.root[r]] = si
		}
	}
	for _, r := range outputs {
		last[p.root[r]] = len(steps)
	}
	slots := map[tensor.DType][]slot{}
	slotOf := make([]int, n)
	for si, s := range steps {
		out := int(s.out)
		if !s.view && p.root[out] == out && arenaType(values[out].dt) {
			dt, size := values[out].dt, values[out].shape.Size()
			p.peak += size
			ss := slots[dt]
			best := -1
			for i, sl := range ss {
				if !sl.free {
					continue
				}
				switch {
				case best < 0:
					best = i
				case sl.size >= size && (ss[best].size < size || sl.size < ss[best].size):
					best = i
				case ss[best].size < size && sl.size > ss[best].size:
					best = i
				}
			}
			if best < 0 {
				ss = append(ss, slot{size: size})
				best = len(ss) - 1
			}
			ss[best].free = false
			ss[best].size = max(ss[best].size, size)
			slots[dt] = ss
			slotOf[out] = best
			p.inArn[out] = true
			if last[out] < 0 { // read by nothing: its slot is free again at once
				ss[best].free = true
			}
		}
		for _, r := range s.in { // free what this step read last
			root := p.root[r]
			if last[root] == si && p.inArn[root] {
				slots[values[root].dt][slotOf[root]].free = true
				last[root] = -2 // freed once
			}
		}
	}
	for dt, ss := range slots { // slots laid end to end
		off := 0
		for i := range ss {
			ss[i].off = off
			off += ss[i].size
		}
		if dt == tensor.Float32 {
			p.f32 = off
		} else {
			p.f64 = off
		}
	}
	for v := range values {
		if p.inArn[v] {
			p.off[v] = slots[values[v].dt][slotOf[v]].off
		}
	}
	return p
}

// arenaType reports whether values of dt live in the shared arena; others
// (integer intermediates, rare) get a tensor of their own per arena.
func arenaType(dt tensor.DType) bool { return dt == tensor.Float32 || dt == tensor.Float64 }
