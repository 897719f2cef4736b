package gemm

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Helpers are goroutines kept for Gemm's parallel products. Starting a
// goroutine per product means waking an idle OS thread each time, tens of
// microseconds on a virtual machine and a large part of a model-sized
// product; a helper instead polls for its next part for a short while after
// each one (yielding its core to other goroutines between polls) before it
// parks on a channel.

// helperPolls is how many times a helper polls, yielding in between,
// before it parks: some 10-30 µs when nothing else is runnable, enough to
// span the gap between the products of one training step.
const helperPolls = 256

// helpable is a parallel product whose parts a helper takes until none is
// left (help), then lets go of.
type helpable interface{ help() }

// task is one product handed to a helper.
type task struct {
	t helpable
}

type helper struct {
	busy     atomic.Bool // claimed by a product
	box      atomic.Pointer[task]
	sleeping atomic.Bool
	wake     chan struct{}
}

var (
	helpersMu sync.Mutex
	helpers   atomic.Pointer[[]*helper]
)

// claimHelpers claims up to n idle helpers into dst, starting new ones while
// there are fewer than maxHelpers; helpers busy with another product are
// skipped, since the caller's own goroutine takes parts too.
func claimHelpers(dst []*helper, n, maxHelpers int) []*helper {
	if hs := helpers.Load(); hs != nil {
		for _, h := range *hs {
			if len(dst) == n {
				return dst
			}
			if h.busy.CompareAndSwap(false, true) {
				dst = append(dst, h)
			}
		}
	}
	helpersMu.Lock()
	defer helpersMu.Unlock()
	var all []*helper
	if hs := helpers.Load(); hs != nil {
		all = *hs
	}
	if len(dst) == n || len(all) >= maxHelpers {
		return dst
	}
	for len(dst) < n && len(all) < maxHelpers {
		h := &helper{wake: make(chan struct{}, 1)}
		h.busy.Store(true)
		go h.loop()
		all = append(all[:len(all):len(all)], h) // readers keep the old slice
		dst = append(dst, h)
	}
	grown := all // declared here so that only a call that grows the set allocates
	helpers.Store(&grown)
	return dst
}

// give hands tk to the claimed helper h.
func (h *helper) give(tk *task) {
	h.box.Store(tk)
	if h.sleeping.CompareAndSwap(true, false) {
		h.wake <- struct{}{}
	}
}

func (h *helper) loop() {
	for {
		tk := h.await()
		tk.t.help()
		h.busy.Store(false)
	}
}

// await returns the next task: polled for helperPolls rounds, then parked.
// The sleeping flag is set before the last look at the box, and give sets
// the box before clearing the flag, so a task is never missed; when both
// sides see each other, the wake-up token is drained.
func (h *helper) await() *task {
	for range helperPolls {
		if tk := h.box.Swap(nil); tk != nil {
			return tk
		}
		runtime.Gosched()
	}
	h.sleeping.Store(true)
	if tk := h.box.Swap(nil); tk != nil {
		if !h.sleeping.CompareAndSwap(true, false) {
			<-h.wake
		}
		return tk
	}
	<-h.wake
	return h.box.Swap(nil)
}
