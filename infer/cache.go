package infer

import (
	"errors"
	"fmt"
	"sync"

	"github.com/plumbml/plumb/tensor"
)

// Cache keeps compiled plans of one forward pass, one per input signature,
// and compiles a plan the first time a signature comes (tracing the
// forward pass on that call's inputs). Most recently used plans stay; the
// oldest goes once Size are held.
//
// Why a plan per signature and not one plan for the largest size: a plan's
// ops have their shapes resolved (a convolution's geometry, a GEMM's
// blocking, an LSTM's schedule), and the ragged ops carry their batch's
// sequence offsets as attributes, so running a batch-64 plan on one
// request would compute 64 rows and mask 63, and a ragged batch has no
// "largest" layout that serves shorter ones without padding steps that the
// ragged kernels exist to skip. Compiling costs one traced forward pass and
// the passes, once per signature. A server bounds the number of
// signatures by batching requests into a few sizes (pad the batch to the
// next bucket, such as 1, 8, 64), and sequence models by bucketing
// lengths the same way (the inputs named in Static key the plan by their
// values: the offsets of a ragged batch).
type Cache struct {
	forward Forward
	opts    Options
	size    int
	static  []int

	mu    sync.Mutex
	plans []cached // most recently used last
}

type cached struct {
	key  uint64
	in   []*tensor.Tensor // the traced inputs, compared on a key match
	plan *Plan
}

// CacheOptions configure a Cache.
type CacheOptions struct {
	Compile Options
	// Size is how many plans the cache keeps (default 8).
	Size int
	// Static lists the inputs whose values, not only their shapes, fix the
	// plan: the offsets of a ragged batch, which the sequence ops take as
	// attributes.
	Static []int
}

// NewCache returns a cache of plans of forward.
func NewCache(forward Forward, opts CacheOptions) (*Cache, error) {
	if forward == nil {
		return nil, errors.New("infer: NewCache of a nil forward pass")
	}
	if opts.Size < 0 {
		return nil, fmt.Errorf("infer: NewCache: negative size %d", opts.Size)
	}
	if opts.Size == 0 {
		opts.Size = 8
	}
	return &Cache{forward: forward, opts: opts.Compile, size: opts.Size, static: append([]int(nil), opts.Static...)}, nil
}

// Plan returns the plan for in's signature, compiling it on first use.
// Looking up a held plan allocates nothing.
func (c *Cache) Plan(in ...*tensor.Tensor) (*Plan, error) {
	if c == nil || c.forward == nil {
		return nil, errors.New("infer: Plan of a Cache NewCache did not make")
	}
	for i, x := range in {
		if x == nil {
			return nil, fmt.Errorf("infer: Cache.Plan: input %d is nil", i)
		}
	}
	for _, s := range c.static {
		if s < 0 || s >= len(in) || in[s].DType().IsFloat() {
			return nil, fmt.Errorf("infer: Cache.Plan: static input %d is not an integer input of the %d given", s, len(in))
		}
	}
	key := c.key(in)
	c.mu.Lock()
	for i := len(c.plans) - 1; i >= 0; i-- {
		e := c.plans[i]
		if e.key == key && c.same(e.in, in) {
			copy(c.plans[i:], c.plans[i+1:]) // move to the back: most recently used
			c.plans[len(c.plans)-1] = e
			c.mu.Unlock()
			return e.plan, nil
		}
	}
	c.mu.Unlock()
	// Compile outside the lock: another signature's callers need not wait.
	traced := make([]*tensor.Tensor, len(in))
	for i, x := range in {
		traced[i] = x.Clone()
	}
	g, err := Trace(c.forward, traced...)
	if err != nil {
		return nil, err
	}
	p, err := g.Compile(c.opts)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.plans) == c.size {
		c.plans = append(c.plans[:0], c.plans[1:]...)
	}
	c.plans = append(c.plans, cached{key: key, in: traced, plan: p})
	return p, nil
}

// Run runs the plan for in's signature into out (Plan.Run).
func (c *Cache) Run(out *tensor.Tensor, in ...*tensor.Tensor) error {
	p, err := c.Plan(in...)
	if err != nil {
		return err
	}
	return p.Run(out, in...)
}

// Len returns the number of plans held.
func (c *Cache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.plans)
}

// key hashes the inputs' dtypes and shapes and the static inputs' values
// (FNV-1a over the numbers).
func (c *Cache) key(in []*tensor.Tensor) uint64 {
	h := uint64(14695981039346656037)
	mix := func(v int) {
		h ^= uint64(v)
		h *= 1099511628211
	}
	for _, x := range in {
		mix(int(x.DType()))
		mix(x.Rank())
		for i := 0; i < x.Rank(); i++ {
			mix(x.Dim(i))
		}
	}
	for _, s := range c.static {
		for i := 0; i < in[s].Size(); i++ {
			mix(int(in[s].At(i)))
		}
	}
	return h
}

// same reports whether in has the signature (and static values) of traced.
func (c *Cache) same(traced, in []*tensor.Tensor) bool {
	if len(traced) != len(in) {
		return false
	}
	for i, t := range traced {
		if !sameSig(in[i], t.DType(), t.Shape()) {
			return false
		}
	}
	for _, s := range c.static {
		for i := 0; i < in[s].Size(); i++ {
			if in[s].At(i) != traced[s].At(i) {
				return false
			}
		}
	}
	return true
}
