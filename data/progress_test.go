package data

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// clock is a fake time for Progress.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// A phase shorter than a second prints nothing; a longer one says what it
// reads and how far, every ProgressEvery off a terminal, and its totals at
// the end.
func TestProgress(t *testing.T) {
	for _, tc := range []struct {
		name  string
		total int
		steps []time.Duration // when each Add of 1000 units (1 MB) happens
		want  []string
	}{
		{"quick", 0, []time.Duration{100 * time.Millisecond, 900 * time.Millisecond}, nil},
		{"slow, total unknown", 0, []time.Duration{500 * time.Millisecond, 1200 * time.Millisecond, 2 * time.Second, 3300 * time.Millisecond, 4 * time.Second},
			[]string{"reading imdb.tar.gz: 2000 reviews, 2.0 MB (1.2s)", "reading imdb.tar.gz: 4000 reviews, 4.0 MB (3.3s)", "read imdb.tar.gz: 5000 reviews, 5.0 MB (4s)"}},
		{"slow, total known", 4000, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 12 * time.Second},
			[]string{"reading imdb.tar.gz: 1000/4000 reviews, 25%, 1.0 MB (1s)", "reading imdb.tar.gz: 3000/4000 reviews, 75%, 3.0 MB (3s)",
				"reading imdb.tar.gz: 4000/4000 reviews, 100%, 4.0 MB (12s)", "read imdb.tar.gz: 4000/4000 reviews, 100%, 4.0 MB (12s)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			c := &clock{t: time.Unix(0, 0)}
			p := NewProgress(&out, "imdb.tar.gz", "reviews", tc.total)
			p.now, p.start = c.now, c.t
			for _, d := range tc.steps {
				c.t = time.Unix(0, 0).Add(d)
				p.Add(1000, 1e6)
			}
			p.Done()
			var lines []string
			if s := strings.TrimSpace(out.String()); s != "" {
				lines = strings.Split(s, "\n")
			}
			assert.Equal(t, tc.want, lines)
		})
	}
	var nilP *Progress
	nilP.Add(1, 1)
	nilP.Done()
	assert.Nil(t, NewProgress(nil, "x", "files", 0))
}
