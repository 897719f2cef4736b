//go:build !amd64

package vec

func setAVX(bool) {}

func setMax2x2AVX2(bool) bool { return false }
