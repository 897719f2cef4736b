//go:build !amd64

package winograd

// hasAVX is false off amd64: the transforms run in plain Go.
var hasAVX = false

func inputAVX(tiles int, x *float32, rs, c int, v *float32, vs int) {
	panic("winograd: no vector transforms off amd64")
}

func outputAVX(tiles int, m *float32, ms, k int, b, y *float32, ys int) {
	panic("winograd: no vector transforms off amd64")
}

func outputAdjointAVX(tiles int, dy *float32, ys, k int, dm *float32, ms int) {
	panic("winograd: no vector transforms off amd64")
}
