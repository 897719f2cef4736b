//go:build unix

package data

import (
	"bytes"
	"testing"

	"github.com/plumbml/plumb/data/internal/datatest"
)

// A 0.4 MB gzip vocabulary whose second line repeats its first is refused
// at line 2, as it arrives, under a 512 MiB address-space cap within 10 s.
func TestLoadVocabBombUnderMemoryLimit(t *testing.T) {
	datatest.RefusedUnderMemoryLimit(t, func() error {
		_, err := LoadVocab(bytes.NewReader(datatest.GzipBomb(t, nil, []byte("a\n"), 2000<<20)), "dict.txt.gz", "")
		return err
	}, `dict.txt.gz: token "a" on lines 1 and 2`)
}
