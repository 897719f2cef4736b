package imdb

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The wants were printed by Paddle's expression
// bytes.rstrip(b'\n\r').translate(None, string.punctuation).lower().split().
func TestTokenizeMatchesPaddle(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"I loved it!! <br /><br />Don't miss\n", []string{"i", "loved", "it", "br", "br", "dont", "miss"}},
		{"Caf\u00e9 \u00c9T\u00c9  TAB\there\r\n", []string{"café", "ÉtÉ", "tab", "here"}},
		{"a-b_c (d) [e]{f} \"g\" 3.5/10\vx\fy", []string{"abc", "d", "ef", "g", "3510", "x", "y"}},
		{"", nil},
		{"...!!!", nil},
	}
	for _, tc := range tests {
		got := Tokenize(tc.in)
		if len(tc.want) == 0 {
			assert.Empty(t, got, "%q", tc.in)
			continue
		}
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
}
