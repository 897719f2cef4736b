package text

import (
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// FuzzWordPiece reads arbitrary vocabulary files and tokenizes arbitrary
// text with them: no panic, every id in the vocabulary, one token type
// per id, and a truncated encoding within its maximum length.
func FuzzWordPiece(f *testing.F) {
	f.Add([]byte("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n##lo\nwor\n##ld\n中\n"), "Hello, wörld! 中国 \x00\u200b", "pair text", 7)
	f.Add([]byte("[UNK]\r\n[CLS] \n[SEP]\n\n\n##\n#\n"), "## #a\t\n", "", 3)
	f.Add([]byte("[CLS]\n[SEP]\n"), "no unknown", "x", 0)
	f.Fuzz(func(t *testing.T, vocab []byte, a, b string, maxLen int) {
		path := filepath.Join(t.TempDir(), "vocab.txt")
		if err := os.WriteFile(path, vocab, 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := ReadWordPiece(path, WordPieceConfig{MaxWordChars: 20})
		if err != nil {
			return
		}
		maxLen = maxLen % 64
		for _, pair := range []bool{false, true} {
			var e Encoding
			if pair {
				e, err = w.EncodePair(a, b, maxLen)
			} else {
				e, err = w.Encode(a, maxLen)
			}
			if err != nil {
				if maxLen >= 3 {
					t.Fatalf("max length %d: %v", maxLen, err)
				}
				continue
			}
			if len(e.TypeIDs) != len(e.IDs) {
				t.Fatalf("%d ids, %d types", len(e.IDs), len(e.TypeIDs))
			}
			if maxLen > 0 && len(e.IDs) > maxLen {
				t.Fatalf("%d ids over max length %d", len(e.IDs), maxLen)
			}
			for _, id := range e.IDs {
				if id < 0 || id >= w.Len() {
					t.Fatalf("id %d outside a vocabulary of %d", id, w.Len())
				}
			}
		}
		for _, tok := range w.Tokenize(a) {
			if !utf8.ValidString(tok) {
				t.Fatalf("token %q is not UTF-8", tok)
			}
		}
	})
}
