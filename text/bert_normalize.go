// Package text turns raw text into token ids: BERT's WordPiece tokenizer
// (WordPiece), giving the ids of Hugging Face tokenizers' BertNormalizer,
// BertPreTokenizer and WordPiece model, which transformers' BertTokenizer
// (BertTokenizerFast) runs.
package text

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// bertNormalize is BERT's text cleaning and normalisation, in the order of
// tokenizers' BertNormalizer (normalizers/bert.rs):
//
//  1. clean: drop U+0000, U+FFFD and the characters of general category
//     C (Cc, Cf, Co, Cs) other than \t, \n and \r; map
//     \t, \n, \r and Unicode White_Space to a space;
//  2. with chinese, put spaces around CJK ideographs (isCJK);
//  3. with stripAccents, decompose (NFD) and drop nonspacing marks (Mn);
//  4. with lower, lower-case each character by its full Unicode mapping
//     (Rust's char::to_lowercase: 'İ' becomes "i̇", no final-sigma rule).
func bertNormalize(s string, chinese, stripAccents, lower bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == 0 || r == unicode.ReplacementChar || isControl(r):
		case isWhitespace(r):
			b.WriteByte(' ')
		case chinese && isCJK(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	s = b.String()
	if stripAccents {
		d := norm.NFD.String(s)
		b.Reset()
		for _, r := range d {
			if !unicode.Is(unicode.Mn, r) {
				b.WriteRune(r)
			}
		}
		s = b.String()
	}
	if lower {
		b.Reset()
		for _, r := range s {
			if r == 'İ' { // the one unconditional multi-character lower-case mapping (SpecialCasing.txt)
				b.WriteString("i\u0307")
				continue
			}
			b.WriteRune(unicode.ToLower(r))
		}
		s = b.String()
	}
	return s
}

// isWhitespace reports \t, \n, \r and Unicode's White_Space (Rust's
// char::is_whitespace).
func isWhitespace(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.White_Space, r)
}

// isControl reports general category C other than \t, \n and \r: Cc, Cf,
// Co and Cs (the unicode_categories crate's is_other, which tokenizers
// calls; unassigned code points, Cn, are kept, where the Python
// BertTokenizerLegacy drops them).
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) // not unicode.C, which also holds Cn
}

// isCJK reports the CJK Unified Ideographs blocks and their extensions and
// compatibility ideographs, the ranges of BERT's _is_chinese_char (Hangul,
// Hiragana and Katakana are not among them).
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

// isPunct reports BERT's punctuation: ASCII punctuation (which includes
// symbols such as $, ^ and `) and Unicode general category P.
func isPunct(r rune) bool {
	return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) ||
		unicode.In(r, unicode.P)
}

// bertPreTokenize splits normalised text into words as tokenizers'
// BertPreTokenizer does: at whitespace (removed) and around each
// punctuation character (kept as a word of its own).
func bertPreTokenize(s string, yield func(word string)) {
	start := -1
	for i, r := range s {
		switch {
		case unicode.Is(unicode.White_Space, r):
			if start >= 0 {
				yield(s[start:i])
				start = -1
			}
		case isPunct(r):
			if start >= 0 {
				yield(s[start:i])
				start = -1
			}
			yield(s[i : i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		yield(s[start:])
	}
}
