package gradcheck

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumbml/plumb/tensor"
)

// square's true gradient is 2x·g; the checker must accept it and reject 3x·g.
func TestCheckCatchesWrongGradient(t *testing.T) {
	fwd := func(in []*tensor.Tensor) (*tensor.Tensor, error) {
		y := tensor.ZerosLike(in[0])
		for i, v := range in[0].Float64s() {
			y.Float64s()[i] = v * v
		}
		return y, nil
	}
	bwdWith := func(k float64) Backward {
		return func(in []*tensor.Tensor, _, gout *tensor.Tensor) ([]*tensor.Tensor, error) {
			g := tensor.ZerosLike(in[0])
			for i, v := range in[0].Float64s() {
				g.Float64s()[i] = k * v * gout.Float64s()[i]
			}
			return []*tensor.Tensor{g}, nil
		}
	}
	x, err := tensor.RandNormal(tensor.NewRNG(1), tensor.Float64, 0, 1, 3, 4)
	require.NoError(t, err)
	require.NoError(t, Check(fwd, bwdWith(2), []*tensor.Tensor{x}, []int{0}, Default))
	require.ErrorContains(t, Check(fwd, bwdWith(3), []*tensor.Tensor{x}, []int{0}, Default), "analytic")
}
