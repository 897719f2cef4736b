//go:build unix

package data

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/plumbml/plumb/data/internal/datatest"
	"github.com/plumbml/plumb/internal/memlimit"
)

// A 0.4 MB gzip vocabulary whose second line repeats its first is refused
// at line 2 under a 512 MiB address-space cap within 10 s; LoadVocab read
// every line (out of memory) before it noticed the duplicate.
func TestLoadVocabBombUnderMemoryLimit(t *testing.T) {
	start := time.Now()
	msg := memlimit.Run(t, 512, func() error {
		_, err := LoadVocab(bytes.NewReader(datatest.GzipBomb(t, nil, []byte("a\n"), 2000<<20)), "dict.txt.gz", "")
		return err
	})
	assert.Contains(t, msg, `dict.txt.gz: token "a" on lines 1 and 2`)
	assert.Less(t, time.Since(start), 10*time.Second)
}
