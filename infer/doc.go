// Package infer compiles a model's forward pass into a static inference
// plan and runs it without the training machinery: no tape, no gradient
// records, no per-call graph bookkeeping.
//
// Trace runs the model once on an inference tape with example inputs and
// captures every op it applies (graph.Tape.SetTrace) into a Graph: the ops
// in order with their attributes, the weights as constants shared with the
// model, every shape resolved for the example's signature. A Builder makes
// the same Graph node by node from (op, inputs) pairs, for an importer of
// another format. Graph.Compile runs the passes, each a rewrite in a file
// of its own: transposes and in-place copies absorbed (absorb.go: into a
// matmul's transpose flag, a constant, or a view); batch norm lowered to a
// scale and shift per channel and folded into the convolution or linear
// layer next to it (affine.go, fold.go); consecutive linear layers folded
// into one where that saves work (linear_chain.go); linear weights packed
// once into the GEMM's panels and convolution weights laid out for their
// algorithm (prepack.go); bias, residual add and activation as one
// epilogue pass over the product's output (epilogue.go); N sequence pools
// with their activations and their concat as one op (seqpool_concat.go);
// and chains of elementwise ops as one loop (chain.go). Then it plans
// memory: every intermediate gets a slot in one arena, slots shared by
// values whose lifetimes do not overlap (see ARCHITECTURE.md, "The
// inference plan"). Options.NoFusion compiles without the passes that
// fuse; Plan.Explain shows the graph before and after them.
//
// A Plan is safe for concurrent use: each call takes an arena from the
// plan's free list (kept across garbage collections, unlike a sync.Pool's
// contents), binds its inputs and runs each step into its slot through
// the op's ops.Into (ForwardInto), so the plan itself allocates nothing per
// call; an op without ForwardInto is rebuilt from its attributes and run
// by Forward, its output copied into the arena (Plan.Explain marks those).
//
// A plan holds for one input signature. Cache keeps one plan per
// signature, compiled on first use (see Cache for why a plan per shape and
// not one for the largest).
package infer
