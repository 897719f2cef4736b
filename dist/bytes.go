package dist

import "unsafe"

// bytesOf views a numeric slice as its bytes, without copying, for
// collectives that move bytes.
func bytesOf[T float32 | float64 | int32 | int64](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(s[0])))
}

// viewAs views bytes (from bytesOf) as a numeric slice, without copying.
func viewAs[T float32 | float64 | int32 | int64](b []byte) []T {
	var z T
	n := len(b) / int(unsafe.Sizeof(z))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}
