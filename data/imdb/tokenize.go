package imdb

import (
	"strings"
)

// Tokenize splits text the way the Paddle book's IMDB reader
// (paddle.dataset.imdb.tokenize) does: trailing line breaks dropped, every
// ASCII punctuation character (Python's string.punctuation,
// !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~) deleted, ASCII letters lower-cased,
// then split on ASCII whitespace. Punctuation is deleted, not a separator:
// "don't" becomes "dont" and "<br />" becomes "br". Bytes beyond ASCII pass
// through unchanged, as they do in Paddle's bytes-level code.
func Tokenize(text string) []string {
	text = strings.TrimRight(text, "\r\n")
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case isPunct(c):
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return strings.FieldsFunc(b.String(), func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
}

// isPunct reports whether c is in Python's string.punctuation.
func isPunct(c byte) bool {
	return ('!' <= c && c <= '/') || (':' <= c && c <= '@') || ('[' <= c && c <= '`') || ('{' <= c && c <= '~')
}

// isSpace reports whether c is ASCII whitespace as Python's bytes.split sees it.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}
