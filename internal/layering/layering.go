// Package layering holds Plumb's import rules, the ones ARCHITECTURE.md's
// "Layers and import rules" lists, as a table, and the checker that the
// package's test runs over `go list -deps -json ./...`: a package may
// import the standard library, the Plumb packages its rule names and the
// third-party packages its rule names, and nothing else. A Plumb package
// that no rule covers is an error too, so a new package is placed in the
// layering when it is added. Only the imports of non-test files count: a
// test may import upwards (a model's test may read parity's goldens).
package layering

import (
	"fmt"
	"slices"
	"strings"
)

// Rule says what the packages matching Pkg may import. A pattern is a
// path relative to the module root ("" is the root package), or a path
// ending in "/..." that matches that package and every package below it;
// a third-party pattern is a full import path. "*" in May allows every
// Plumb package, and a May entry starting with "!" forbids what it
// matches even where another entry allows it.
type Rule struct {
	Pkg string
	May []string
}

// slices are the low-level packages that work on plain slices: each may
// import tensor, the other internal slice packages below it, and the CPU
// feature detection. internal/testdev is not among them (it is test
// support that sits on top of ops and graph).
var slicePkgs = []string{"tensor", "internal/...", "!internal/testdev/...", "!internal/layering", "golang.org/x/sys/cpu"}

// below returns slicePkgs plus pkgs: a rule's allowed imports.
func below(pkgs ...string) []string { return append(slices.Clone(slicePkgs), pkgs...) }

// Rules are Plumb's layers, from the bottom up; the first rule whose Pkg
// matches a package is its rule.
var Rules = []Rule{
	// Base: the standard library only.
	{Pkg: "", May: nil},
	{Pkg: "internal/par", May: nil},
	{Pkg: "internal/readlimit", May: nil},
	{Pkg: "internal/memlimit", May: nil},
	{Pkg: "internal/apicheck", May: nil},
	{Pkg: "internal/layering", May: nil},
	{Pkg: "metrics", May: nil},
	{Pkg: "runlog", May: nil},
	{Pkg: "runlog/tensorboard", May: nil},
	// Tokenizers: the standard library and x/text's Unicode normalization.
	{Pkg: "text", May: []string{"golang.org/x/text/unicode/norm"}},

	// Dense tensors; their helper goroutines.
	{Pkg: "tensor", May: []string{"internal/par"}},
	{Pkg: "tensor/dense", May: []string{"tensor", "gorgonia.org/tensor/..."}},

	// Code generators run by go generate (go run): anything.
	{Pkg: "internal/opgen/...", May: []string{"*"}},
	{Pkg: "ops/internal/opgen/...", May: []string{"*"}},

	// Test support: a device in host memory, its kernels, device tests.
	{Pkg: "internal/testdev/...", May: []string{"tensor", "internal/...", "ops", "graph"}},

	// Inner loops on slices: GEMM, lowering, vectors, Winograd, convolution.
	// internal/qgemm, the int8 GEMM of quantized inference, is one of them.
	{Pkg: "internal/qgemm", May: slicePkgs},
	{Pkg: "internal/...", May: slicePkgs},

	// Weight initializers.
	{Pkg: "initializer", May: []string{"tensor"}},

	// Datasets and batching, then the corpus readers.
	// data/internal/fileio is the readers' capped file access;
	// data/internal/datatest is the readers' test support.
	{Pkg: "data/internal/datatest", May: below("data", "data/internal/...", "github.com/stretchr/testify/...")},
	{Pkg: "data/internal/...", May: below()},
	{Pkg: "data", May: below("data/internal/...")},
	{Pkg: "data/...", May: below("data", "data/...")},

	// The ops and their CPU kernels; the CUDA device.
	{Pkg: "ops/cuda/...", May: below("ops", "gorgonia.org/cu/...")},
	{Pkg: "ops/...", May: below("ops/...")},

	// The tape.
	{Pkg: "graph", May: below("ops")},

	// Layers, optimizers and what works on parameters.
	{Pkg: "layers", May: below("ops", "graph", "initializer")},
	{Pkg: "optim", May: below("ops", "graph")},
	{Pkg: "decode", May: below("ops", "graph")},
	{Pkg: "infer", May: below("ops", "graph", "layers", "initializer")},
	{Pkg: "checkpoint", May: below("ops", "graph", "optim")},
	{Pkg: "runlog/plot", May: []string{"runlog", "gonum.org/v1/plot/..."}},
	{Pkg: "runlog/tensorboard/tblog", May: []string{"runlog", "runlog/tensorboard"}},

	// ONNX import: the generated protobuf types, then the reader.
	{Pkg: "onnx/internal/pb", May: []string{"google.golang.org/protobuf/..."}},
	{Pkg: "onnx", May: []string{"tensor", "internal/readlimit", "onnx/internal/pb", "google.golang.org/protobuf/..."}},
	{Pkg: "onnx/run", May: below("ops", "onnx", "infer")},
	// ONNX export: a traced forward pass (graph's tracer, infer's Forward)
	// written as the reader's protobuf types.
	{Pkg: "onnx/export", May: below("ops", "graph", "infer", "onnx/internal/pb", "google.golang.org/protobuf/...")},

	// Training, data parallelism, the parity checks.
	{Pkg: "train", May: below("ops", "graph", "optim", "checkpoint", "runlog", "metrics")},
	{Pkg: "dist", May: below("ops", "graph")},
	{Pkg: "parity", May: below("ops", "graph", "layers", "optim")},

	// The book's models: everything below them, but not one another;
	// models/chapter, the shape they share, is below them all.
	{Pkg: "models/chapter", May: below("data", "data/...", "ops", "graph", "initializer", "layers", "optim", "decode",
		"checkpoint", "metrics", "runlog", "train", "dist")},
	{Pkg: "models/...", May: below("data", "data/...", "ops", "graph", "initializer", "layers", "optim", "decode",
		"checkpoint", "metrics", "runlog", "train", "dist", "text", "models/chapter")},

	// Benchmarks and KPIs, the examples, and the command line: everything.
	{Pkg: "bench/...", May: []string{"*", "!cmd/..."}},
	{Pkg: "examples/...", May: []string{"*", "!cmd/..."}},
	{Pkg: "cmd/...", May: []string{"*"}},
}

// Package is one package of the import graph: its path relative to the
// module root when it is Plumb's (Local), else its import path, and the
// imports of its non-test files with the standard library left out.
type Package struct {
	Path    string
	Local   bool
	Imports []Import
}

// Import is one import of a Package, as Package.Path is written.
type Import struct {
	Path  string
	Local bool
}

// Violation is an import that the rules forbid, or a package no rule
// covers (Import empty).
type Violation struct {
	Pkg, Import string
}

func (v Violation) String() string {
	if v.Import == "" {
		return fmt.Sprintf("%s: no rule in internal/layering covers this package; add one (and to ARCHITECTURE.md)", show(v.Pkg))
	}
	return fmt.Sprintf("%s imports %s, which internal/layering's rules (ARCHITECTURE.md, \"Layers and import rules\") forbid", show(v.Pkg), show(v.Import))
}

// show names the root package "." in messages.
func show(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// Check returns every import of pkgs that rules forbid, and every Plumb
// package that no rule covers; packages that are not Plumb's are not
// checked.
func Check(rules []Rule, pkgs []Package) []Violation {
	var bad []Violation
	for _, p := range pkgs {
		if !p.Local {
			continue
		}
		r, ok := ruleFor(rules, p.Path)
		if !ok {
			bad = append(bad, Violation{Pkg: p.Path})
			continue
		}
		for _, imp := range p.Imports {
			if !allowed(r, imp) {
				bad = append(bad, Violation{Pkg: p.Path, Import: imp.Path})
			}
		}
	}
	return bad
}

// ruleFor returns the first rule whose pattern matches the Plumb package
// path.
func ruleFor(rules []Rule, path string) (Rule, bool) {
	for _, r := range rules {
		if match(r.Pkg, path) {
			return r, true
		}
	}
	return Rule{}, false
}

// allowed reports whether r lets its packages import imp: no "!" entry
// matches it, and an entry (or "*", for a Plumb package) does.
func allowed(r Rule, imp Import) bool {
	ok := false
	for _, m := range r.May {
		if neg, found := strings.CutPrefix(m, "!"); found {
			if imp.Local && match(neg, imp.Path) {
				return false
			}
			continue
		}
		if (m == "*" && imp.Local) || (isLocalPattern(m) == imp.Local && match(m, imp.Path)) {
			ok = true
		}
	}
	return ok
}

// isLocalPattern reports whether a May entry names Plumb packages: a
// third-party path starts with a domain, whose first element has a dot.
func isLocalPattern(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}

// match reports whether path matches pattern (see Rule).
func match(pattern, path string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return pattern == path
}
