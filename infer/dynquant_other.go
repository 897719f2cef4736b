//go:build !amd64

package infer

var dynAVX2 = false

func dynRangeFast([]float32) (done int, lo, hi float32, nan bool) { return 0, 0, 0, false }

func dynQuantizeFast([]float32, float32, uint8, []uint8) int { return 0 }
