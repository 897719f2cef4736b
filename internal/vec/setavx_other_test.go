//go:build !amd64

package vec

func setAVX(bool) {}
