package ops

import (
	"fmt"
	"sort"
)

//go:generate go run -tags opgen ./internal/opgen

// Attrs, the attribute bag, is generated (zz_attrs.go) from the op table:
// one field per attribute of any op's typed <Op>Attrs, under the JSON name
// the parity goldens' case.json gives it. It is the one description from
// which Build makes an op, so that the parity harness, the gradient checks
// and the device tests build ops the same way. The zero value of a field is
// the op's default (Padding PadExplicit, Reduction LossMean).

// Build returns the op called name with the attributes a: it copies the
// op's fields out of the bag into its typed <Op>Attrs and builds the op
// with its Spec's Make. An unknown name is an error naming it; attributes
// that do not fit the inputs fail later, in Forward, as for an op made by
// its constructor.
func Build(name string, a Attrs) (Op, error) {
	s, ok := registry[name]
	conv, gen := typedAttrs[name]
	if !ok || !gen {
		return nil, fmt.Errorf("ops.Build: no op %q", name)
	}
	op, err := s.Make.Make(conv(a))
	if err != nil {
		return nil, fmt.Errorf("ops.Build %s: %w", name, err)
	}
	return op, nil
}

// Buildable returns the names Build knows, sorted.
func Buildable() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		if _, ok := typedAttrs[n]; ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}
