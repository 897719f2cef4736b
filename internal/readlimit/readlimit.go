// Package readlimit bounds what Plumb's readers accept. Full reads a
// length that a file's header declares without trusting it: memory grows
// with the bytes that actually arrive, never with the declared length, so
// a few bytes that claim gigabytes cannot force a huge allocation (IDX,
// .npy, safetensors use it). Limits are the corpus readers' budgets
// (expansion ratio, bytes a file and a call, line length, records, image
// pixels), and Budget, Cap, Ratio and CheckRatio check them before the
// memory they guard is allocated; data/internal/fileio applies them to
// every file, gzip stream, archive member and line, and data.Limits
// exposes the type to callers.
package readlimit

import (
	"errors"
	"fmt"
	"io"
)

// firstChunk is the most that Full allocates before any byte arrives.
const firstChunk = 64 << 10

// Full reads exactly n bytes from r. It allocates at most
// min(n, 64 KiB) up front and then at most twice what has arrived, capped
// at n. An early end of r is io.ErrUnexpectedEOF (wrapped with the
// counts); on any error Full also returns the bytes that did arrive.
func Full(r io.Reader, n int64) ([]byte, error) {
	if n < 0 {
		return nil, fmt.Errorf("negative length %d", n)
	}
	if r == nil {
		return nil, errors.New("nil reader")
	}
	buf := make([]byte, 0, min(n, firstChunk))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(n, 2*int64(cap(buf))))
			copy(grown, buf)
			buf = grown
		}
		k, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err == io.EOF && int64(len(buf)) < n {
			return buf, fmt.Errorf("got %d of %d bytes: %w", len(buf), n, io.ErrUnexpectedEOF)
		}
		if err != nil && err != io.EOF {
			return buf, err
		}
	}
	return buf, nil
}
