package data

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Progress reports a loading phase that may take a while (reading the
// IMDB archive, decoding a JPEG tree), so that a user is not left
// looking at silence: nothing during its first second (ProgressDelay),
// then what it reads and how far it got, such as
//
//	reading aclImdb_v1.tar.gz: 12000 files, 31.4 MB (2s)
//	reading cifar10-jpeg/train: 20000/50000 images, 40% (3s)
//
// on a terminal as one line redrawn a few times a second, elsewhere (a
// log, CI) as a line every ProgressEvery; Done ends the phase with its
// totals when anything was printed. Readers call Add as they go (a nil
// *Progress is silent, so a reader takes one without caring whether
// anyone watches); it is safe for concurrent use.
type Progress struct {
	mu           sync.Mutex
	w            io.Writer
	what, unit   string
	total        int
	tty          bool
	n            int
	bytes        int64
	start, drawn time.Time
	printed      bool
	now          func() time.Time
}

// ProgressDelay is how long a phase runs before Progress prints, and
// ProgressEvery how often it prints a new line where it cannot redraw one.
const (
	ProgressDelay = time.Second
	ProgressEvery = 2 * time.Second
)

// NewProgress starts reporting the reading of what (a file or folder
// name) to w: n units ("files", "images", "reviews") counted by Add, of
// total when it is known (> 0).
func NewProgress(w io.Writer, what, unit string, total int) *Progress {
	if w == nil {
		return nil
	}
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil {
			tty = st.Mode()&os.ModeCharDevice != 0
		}
	}
	p := &Progress{w: w, what: what, unit: unit, total: total, tty: tty, now: time.Now}
	p.start = p.now()
	return p
}

// Add counts n more units and bytes more bytes read, and prints when it
// is time to.
func (p *Progress) Add(n int, bytes int64) {
	if p == nil || p.w == nil { // nil, or not made by NewProgress: silent
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += n
	p.bytes += bytes
	now := p.now()
	if now.Sub(p.start) < ProgressDelay {
		return
	}
	every := ProgressEvery
	if p.tty {
		every = 200 * time.Millisecond
	}
	if p.printed && now.Sub(p.drawn) < every {
		return
	}
	p.drawn, p.printed = now, true
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K", p.line("reading", now))
		return
	}
	fmt.Fprintln(p.w, p.line("reading", now))
}

// Done ends the phase: when Progress printed anything, a last line with
// the totals and the time it took.
func (p *Progress) Done() {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.printed {
		return
	}
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	fmt.Fprintln(p.w, p.line("read", p.now()))
	p.printed = false
}

// line is "<verb> <what>: <n>[/<total>] <unit>[, <pct>%][, <MB>] (<elapsed>)".
func (p *Progress) line(verb string, now time.Time) string {
	s := fmt.Sprintf("%s %s: %d", verb, p.what, p.n)
	if p.total > 0 {
		s += fmt.Sprintf("/%d %s, %.0f%%", p.total, p.unit, 100*float64(p.n)/float64(p.total))
	} else {
		s += " " + p.unit
	}
	if p.bytes > 0 {
		s += fmt.Sprintf(", %.1f MB", float64(p.bytes)/1e6)
	}
	el := now.Sub(p.start)
	if el >= 10*time.Second {
		el = el.Round(time.Second)
	} else {
		el = el.Round(100 * time.Millisecond)
	}
	return s + fmt.Sprintf(" (%s)", el)
}

// Count returns the units and bytes counted so far.
func (p *Progress) Count() (n int, bytes int64) {
	if p == nil {
		return 0, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n, p.bytes
}
