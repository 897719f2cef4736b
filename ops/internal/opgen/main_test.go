package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/ops"
)

func TestBagName(t *testing.T) {
	for _, tc := range []struct{ goName, json, want string }{
		{"Stride", "strides", "Strides"},
		{"Pad", "pads", "Pads"},
		{"Pad", "pad", "Pad"},
		{"KeepDims", "keepdims", "KeepDims"},
		{"TransposeA", "transpose_a", "TransposeA"},
		{"OffsetsB", "offsets_b", "OffsetsB"},
		{"Seed", "-", "Seed"},
		{"Candidate", "", "Candidate"},
	} {
		assert.Equal(t, tc.want, bagName(tc.goName, tc.json), "%s `json:%q`", tc.goName, tc.json)
	}
}

func TestOpList(t *testing.T) {
	assert.Equal(t, "a, b", opList([]string{"a", "b"}))
	assert.Equal(t, "a, b, c, d, e, f and 2 more", opList([]string{"a", "b", "c", "d", "e", "f", "g", "h"}))
}

// The table of the registered ops builds, every op's attributes are a
// struct of package ops, and two ops that share a JSON name share its type.
func TestTable(t *testing.T) {
	tb, err := newTable(ops.Registered())
	require.NoError(t, err)
	require.Len(t, tb.ops, len(ops.Registered()))
	for _, f := range tb.fields {
		assert.NotEmpty(t, f.ops, f.Name)
	}
	_, err = newTable([]ops.Spec{{Name: "bad", Make: ops.MakeOp(func(int) ops.Op { return nil })}})
	require.ErrorContains(t, err, "want a struct of package ops")
}
