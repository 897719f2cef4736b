package graph

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// ParamClaim takes all of its parameters or none, names the one another
// claim holds, claims a parameter listed twice once, and moves the value's
// version on at Release, so that a tape that read the old value refuses
// its Backward; a Backward's own hold ends with it.
func TestParamClaim(t *testing.T) {
	a := NewParam("a", tensor.MustFromSlice([]float64{1, 2}, 2))
	b := NewParam("b", tensor.MustFromSlice([]float64{3}, 1))
	first, second := NewParamClaim("an optimizer step"), NewParamClaim("")

	require.NoError(t, first.Acquire([]*Param{b, b, nil}))
	err := second.Acquire([]*Param{a, b})
	require.ErrorContains(t, err, `parameter "b" is in use by an optimizer step while a ParamClaim starts`)
	require.Nil(t, a.guard.user.Load(), "none: a was given back")

	tape := NewTape()
	require.ErrorContains(t, tape.Param(b).Err(), `parameter "b" is being updated by an optimizer step while a forward pass reads it`)
	first.Release([]*Param{b})
	require.Nil(t, b.guard.user.Load())

	tape = NewTape()
	loss := Sum(Mul(tape.Param(a), tape.Param(b)))
	require.NoError(t, second.Acquire([]*Param{a}))
	require.ErrorContains(t, tape.Backward(loss), `parameter "a" is in use by a ParamClaim while a Backward starts`)
	second.Release([]*Param{a})
	require.ErrorContains(t, tape.Backward(loss), `parameter "a" was updated (by an optimizer step) after this tape's forward pass read it`)

	tape = NewTape()
	loss = Sum(Mul(tape.Param(a), tape.Param(b)))
	require.NoError(t, tape.Backward(loss))
	require.Nil(t, a.guard.user.Load(), "Backward gives its parameters back")
	require.Equal(t, []float64{3, 3}, a.Grad.Float64s())

	var nilClaim *ParamClaim
	require.Error(t, nilClaim.Acquire([]*Param{a}))
	nilClaim.Release([]*Param{a})
}
