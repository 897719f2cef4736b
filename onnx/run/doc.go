// Package run executes ONNX models (read by package onnx) on Plumb's ops,
// in pure Go.
//
// Compile turns an onnx.Model into a Model: every node is mapped, through
// a table with one entry per ONNX op type (one file per op or small family
// of ops), onto Plumb's ops (conv2d, matmul, batch_norm, lstm, ...) or, for
// the small int64 tensors of shape arithmetic, onto plain Go loops. The
// mapping follows each op's definition in the ONNX operator specification
// (docs/Operators.md of onnx 1.22.0), including the opset-dependent forms
// (Squeeze's and Unsqueeze's axes as an attribute up to opset 12 and an
// input from 13, the reductions' axes as an input from 13 for ReduceSum
// and from 18 for the others, Softmax's coerced 2-D form before 13, ...).
//
// Compiling infers every value's element type and, as far as the graph's
// inputs allow, its shape, with symbolic dimensions (dim_param) left
// unknown. A node whose inputs are all known at compile time is evaluated
// then and becomes a constant (constant folding); Shape of a value whose
// dimensions are known is a constant, and the small int64 vectors built
// from shapes (Shape, Gather, Concat, Unsqueeze, Squeeze, Slice, Cast,
// arithmetic) are tracked element by element, so that what a symbolic
// batch dimension does not touch folds and what it touches is evaluated at
// run time. Unknown ops, unsupported attributes, inconsistent shapes and
// dtype mismatches are errors that name the node, its op type, its opset
// and what was expected.
//
// A Model is read-only after Compile: Run may be called from many
// goroutines at once, each call holding its own intermediate values.
package run
