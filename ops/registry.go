package ops

import "sort"

// Spec is an op's entry in the registry, the one list of all ops that the
// gradient-check suite, the parity harness and device backends read, so each
// can fail on an op that lacks its case or kernel.
type Spec struct {
	Name   string
	Inputs []string // input names, in order
	Grads  []int    // indices of the inputs that are differentiable
}

var registry = map[string]Spec{}

// register adds an op at init time; a duplicate name is a programming error.
func register(s Spec) {
	if _, dup := registry[s.Name]; dup {
		panic("ops: duplicate registration of " + s.Name)
	}
	registry[s.Name] = s
}

// Registered returns every op's Spec, sorted by name.
func Registered() []Spec {
	out := make([]Spec, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup returns the Spec of the named op.
func Lookup(name string) (Spec, bool) {
	s, ok := registry[name]
	return s, ok
}
