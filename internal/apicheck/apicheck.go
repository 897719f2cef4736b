// Package apicheck is a test helper: it calls every exported function and
// method of a package with zero values and nils, and fails the test on a
// panic, so that "nothing panics on a user's mistake" stays true as the
// API grows.
//
// Go's reflection cannot list a package's functions or types, so each
// package's test passes a table of them; Check parses the package's source
// and fails when the table misses an exported function or type (or names
// one that no longer exists), so the table cannot silently fall behind.
// Methods need no table: Check finds them by reflection on the types.
package apicheck

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// API lists a package's exported identifiers for Check.
type API struct {
	// Funcs maps the name of every exported package-level function to the
	// function (a generic one instantiated once).
	Funcs map[string]any
	// Types holds a value of every exported type, such as Linear{} or
	// (*Tape)(nil); only its type is used. Interface types are listed as
	// pointers to them, such as (*Optimizer)(nil).
	Types []any
	// Constraints names the exported type constraints, which have no
	// values to list in Types.
	Constraints []string
	// Samples are valid values (a tape, a value on it) that a third call
	// passes for parameters of their types, with zero values for the rest,
	// so that a zero receiver meets real inputs.
	Samples []any
	// MayReturnNil names functions and methods whose documentation says
	// they return a nil pointer (such as Value.Tape of a failed value).
	MayReturnNil []string
	// MayPanic names functions and methods ("Func" or "Type.Method") whose
	// documentation says they panic, such as the Must helpers.
	MayPanic []string
}

// Check compares api with the exported API of the package in dir and calls
// every function and every method of every listed type with zero values:
// nil pointers, slices, maps, funcs and interfaces, zero numbers and empty
// strings, and, in a second call, pointers to zero structs (new(T)) in
// place of nil pointers. Methods are called on the zero value of their type
// and on a pointer to it (new(T)). A panic fails the test, naming the call.
func Check(t *testing.T, dir string, api API) {
	t.Helper()
	funcs, types := exported(t, dir)
	var listedTypes []string
	for _, v := range api.Types {
		listedTypes = append(listedTypes, typeName(reflect.TypeOf(v)))
	}
	listedTypes = append(listedTypes, api.Constraints...)
	for _, name := range funcs {
		if _, ok := api.Funcs[name]; !ok {
			t.Errorf("apicheck: exported function %s is not in the table: add it", name)
		}
	}
	for name := range api.Funcs {
		if !slices.Contains(funcs, name) {
			t.Errorf("apicheck: the table lists %s, which the package does not export", name)
		}
	}
	for _, name := range types {
		if !slices.Contains(listedTypes, name) {
			t.Errorf("apicheck: exported type %s is not in the table: add it", name)
		}
	}
	for _, name := range listedTypes {
		if !slices.Contains(types, name) {
			t.Errorf("apicheck: the table lists type %s, which the package does not export", name)
		}
	}
	names := make([]string, 0, len(api.Funcs))
	for name := range api.Funcs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if slices.Contains(api.MayPanic, name) {
			continue
		}
		fn := reflect.ValueOf(api.Funcs[name])
		for _, in := range argSets(fn.Type(), api.Samples) {
			call(t, name, fn, in, slices.Contains(api.MayReturnNil, name))
		}
	}
	for _, v := range api.Types {
		typ := reflect.TypeOf(v)
		if typ.Kind() == reflect.Pointer && typ.Elem().Kind() == reflect.Interface {
			continue // an interface's methods are its implementations'
		}
		if typ.Kind() == reflect.Pointer {
			typ = typ.Elem()
		}
		recvs := []reflect.Value{reflect.Zero(typ), reflect.New(typ)}
		for _, recv := range recvs {
			for i := range recv.NumMethod() {
				m := recv.Type().Method(i)
				name := typeName(typ) + "." + m.Name
				if slices.Contains(api.MayPanic, name) || (recv.Kind() == reflect.Pointer && hasValueMethod(typ, m.Name)) {
					continue // value methods are called on the value
				}
				for _, in := range argSets(recv.Method(i).Type(), api.Samples) {
					call(t, name, recv.Method(i), in, slices.Contains(api.MayReturnNil, name))
				}
			}
		}
	}
}

func hasValueMethod(typ reflect.Type, name string) bool {
	_, ok := typ.MethodByName(name)
	return ok
}

// typeName is the unqualified name of a type, or of what a pointer points to.
func typeName(typ reflect.Type) string {
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	name := typ.Name()
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i] // a generic type's instantiation
	}
	return name
}

// argSets returns the argument lists for a function of type ft: all zero
// values; pointers to zero structs in place of nil pointers (and one such
// variadic argument); and, when samples fit any parameter, the samples
// with zero values elsewhere.
func argSets(ft reflect.Type, samples []any) [][]reflect.Value {
	n := ft.NumIn()
	if ft.IsVariadic() {
		n-- // the variadic slice is left empty, or holds one element
	}
	var sets [][]reflect.Value
	for variant := range 3 {
		in := make([]reflect.Value, 0, n+1)
		used := false
		arg := func(typ reflect.Type) reflect.Value {
			if variant == 2 {
				for _, s := range samples {
					if v := reflect.ValueOf(s); v.Type() == typ {
						used = true
						return v
					}
				}
			}
			return zero(typ, variant == 1)
		}
		for i := range n {
			in = append(in, arg(ft.In(i)))
		}
		if ft.IsVariadic() && variant > 0 {
			in = append(in, arg(ft.In(n).Elem()))
		}
		if variant < 2 || used {
			sets = append(sets, in)
		}
	}
	return sets
}

// module is the import path prefix of the types that deep calls pass as
// pointers to zero structs: this module's own (a zero rand.Rand, say, is
// no mistake a user makes by accident).
const module = "github.com/plumbml/plumb/"

func zero(typ reflect.Type, deep bool) reflect.Value {
	if deep && typ.Kind() == reflect.Pointer && typ.Elem().Kind() == reflect.Struct && strings.HasPrefix(typ.Elem().PkgPath(), module) {
		return reflect.New(typ.Elem())
	}
	return reflect.Zero(typ)
}

// errType is the type of the error interface.
var errType = reflect.TypeFor[error]()

// call runs fn(in...) and reports a panic, and a nil pointer result whose
// type has an Err method (such as *graph.Value): the API returns a value
// carrying the error instead, so the error reaches Backward.
func call(t *testing.T, name string, fn reflect.Value, in []reflect.Value, mayReturnNil bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s(%s) panicked: %v", name, describe(in), r)
		}
	}()
	for i, out := range fn.Call(in) {
		if mayReturnNil || out.Kind() != reflect.Pointer || !out.IsNil() {
			continue
		}
		if m, ok := out.Type().MethodByName("Err"); ok && m.Type.NumOut() == 1 && m.Type.Out(0) == errType {
			t.Errorf("%s(%s): result %d is a nil %v; want a value carrying the error", name, describe(in), i, out.Type())
		}
	}
}

func describe(in []reflect.Value) string {
	parts := make([]string, len(in))
	for i, v := range in {
		switch {
		case v.Kind() == reflect.Pointer && !v.IsNil():
			parts[i] = v.Type().String() + "(non-nil)"
		default:
			parts[i] = fmt.Sprintf("%s(%v)", v.Type(), v)
		}
	}
	return strings.Join(parts, ", ")
}

// exported returns the exported package-level functions and exported
// types declared in the package in dir, for the current build.
func exported(t *testing.T, dir string) (funcs, types []string) {
	t.Helper()
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		t.Fatalf("apicheck: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("apicheck: %v", err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					funcs = append(funcs, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok && ts.Name.IsExported() {
						types = append(types, ts.Name.Name)
					}
				}
			}
		}
	}
	return funcs, types
}
