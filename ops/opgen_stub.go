//go:build opgen

package ops

// When the generator (ops/internal/opgen) is built, with the tag opgen,
// these stand in for the generated zz_attrs.go, so that a stale generated
// file never stops the generator that rewrites it.

// Attrs is the attribute bag (see build.go); empty while generating.
type Attrs struct{}

var typedAttrs = map[string]func(Attrs) any{}

// AttrsOf returns the attribute bag holding the typed attributes t.
func AttrsOf(t any) Attrs { return Attrs{} }
