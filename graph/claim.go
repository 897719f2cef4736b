package graph

import (
	"fmt"
	"sync/atomic"
)

// claim is who holds a parameter while it runs: a Backward, which writes
// the gradient, or a ParamClaim holder (an optimizer step), which also
// writes the value.
type claim struct {
	what   string // "a Backward", "an optimizer step": for errors
	writes bool   // the holder writes the value (not only the gradient)
}

// paramGuard is a parameter's concurrency guard: the claim in flight, and
// how many value-writing claims have ended (the value's version), which a
// tape compares between its forward pass and its Backward.
type paramGuard struct {
	user    atomic.Pointer[claim]
	version atomic.Uint64
}

// errInUse is the error of a parameter claimed while another call holds
// it.
func errInUse(p *Param, holder, what string) error {
	return fmt.Errorf("graph: parameter %q is in use by %s while %s starts: training one model from two goroutines "+
		"at once is not supported (a Tape, a Param's gradient and an optimizer are not safe for concurrent use); "+
		"train each model on one goroutine, or give each goroutine its own replica (train.Replicas)", p.Name, holder, what)
}

// acquire claims every parameter of ps for c, all or none: when one is
// held by another claim, those taken are given back and the error names
// the parameter. A parameter listed twice is claimed once.
func acquire(ps []*Param, c *claim) error {
	for i, p := range ps {
		if p == nil {
			continue
		}
		for !p.guard.user.CompareAndSwap(nil, c) {
			cur := p.guard.user.Load()
			if cur == c { // listed twice: held already
				break
			}
			if cur != nil {
				giveBack(ps[:i], c, false)
				return errInUse(p, cur.what, c.what)
			}
			// given back between the swap and the load: try again
		}
	}
	return nil
}

// giveBack releases the parameters of ps that c holds; with bump, it
// moves each one's version on (its value was written).
func giveBack(ps []*Param, c *claim, bump bool) {
	for _, p := range ps {
		if p == nil || p.guard.user.Load() != c {
			continue
		}
		if bump {
			p.guard.version.Add(1)
		}
		p.guard.user.CompareAndSwap(c, nil)
	}
}

// ParamClaim marks parameters as in use by one caller that writes their
// values, such as an optimizer's Step, while it runs, so that a Backward
// into one of them, a forward pass reading one (Tape.Param) or another
// claim, on another goroutine, fails with an error naming the parameter
// instead of racing. Package optim's optimizers hold one; code that
// updates parameter values itself while other goroutines may train the
// model can do the same. A ParamClaim is for one goroutine at a time.
type ParamClaim struct{ c claim }

// NewParamClaim returns a claim that errors name as what ("an optimizer
// step").
func NewParamClaim(what string) *ParamClaim {
	if what == "" {
		what = "a ParamClaim"
	}
	return &ParamClaim{c: claim{what: what, writes: true}}
}

// Acquire claims every parameter of ps, all or none: when another call
// holds one of them, it returns an error naming that parameter and holds
// nothing.
func (pc *ParamClaim) Acquire(ps []*Param) error {
	if pc == nil {
		return fmt.Errorf("graph: Acquire of a nil ParamClaim (use NewParamClaim)")
	}
	return acquire(ps, &pc.c)
}

// Release gives back the parameters of ps that pc holds and marks each
// value as changed, so that a tape whose forward pass read it before
// refuses its Backward.
func (pc *ParamClaim) Release(ps []*Param) {
	if pc != nil {
		giveBack(ps, &pc.c, true)
	}
}

// readCheck is Tape.Param's check: p must not be held by a value-writing
// claim (an optimizer step) while a forward pass reads it. It returns the
// value's version, which Backward compares.
func (p *Param) readCheck() (uint64, error) {
	if c := p.guard.user.Load(); c != nil && c.writes {
		return 0, fmt.Errorf("graph: parameter %q is being updated by %s while a forward pass reads it: training one model from two goroutines "+
			"at once is not supported; train each model on one goroutine, or give each goroutine its own replica (train.Replicas)", p.Name, c.what)
	}
	return p.guard.version.Load(), nil
}
