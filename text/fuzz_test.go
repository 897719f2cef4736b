package text

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// FuzzBPE learns merges on the words of arbitrary text and tokenizes
// other arbitrary text with them: no panic, every id in the vocabulary,
// one word back per word, the words themselves back when every character
// was seen in training, and NewBPE of the alphabet and merges gives the
// same ids.
func FuzzBPE(f *testing.F) {
	f.Add("low low low lower newest newest widest", "lowest wider", 10)
	f.Add("ä ö ü ää öö \xff\xfe </w <unk>", "ää \xff </w x <unk>", 5)
	f.Add("a", "", 0)
	f.Fuzz(func(t *testing.T, corpus, input string, merges int) {
		counts := map[string]int{}
		for _, w := range strings.Fields(corpus) {
			counts[w]++
		}
		b, err := LearnBPE(counts, BPEConfig{Merges: merges % 50})
		if err != nil {
			return
		}
		again, err := NewBPE(b.Alphabet(), b.Merges())
		if err != nil {
			t.Fatalf("NewBPE of a learned BPE: %v", err)
		}
		if strings.Contains(input, EndOfWord) {
			return // Segment's documented exception
		}
		words := strings.Fields(input)
		ids := b.Encode(words)
		for _, id := range ids {
			if id < 0 || id >= b.Len() {
				t.Fatalf("id %d outside a vocabulary of %d", id, b.Len())
			}
		}
		if !slices.Equal(ids, again.Encode(words)) {
			t.Fatalf("NewBPE encodes %q differently", input)
		}
		got, err := b.Decode(ids)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(words) {
			t.Fatalf("%d words back from %d: %q from %q", len(got), len(words), got, words)
		}
		if !slices.Contains(ids, b.ID(BPEUnknown)) && !slices.Contains(ids, b.ID(BPEUnknownEnd)) && !slices.Equal(got, words) {
			t.Fatalf("%q back from %q", got, words)
		}
	})
}
