package winograd

import "golang.org/x/sys/cpu"

// hasAVX reports whether the assembly transforms can run (cpu.X86.HasAVX
// includes the OS saving the ymm registers).
var hasAVX = cpu.X86.HasAVX

// inputAVX is Input for c a multiple of 8, eight channels per pass.
//
//go:noescape
func inputAVX(tiles int, x *float32, rs, c int, v *float32, vs int)

// outputAVX is Output for k a multiple of 8, eight channels per pass.
//
//go:noescape
func outputAVX(tiles int, m *float32, ms, k int, b, y *float32, ys int)

// outputAdjointAVX is OutputAdjoint for k a multiple of 8, eight channels
// per pass.
//
//go:noescape
func outputAdjointAVX(tiles int, dy *float32, ys, k int, dm *float32, ms int)
