package train

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Bar shows Progress reports: on a terminal it redraws one status line a
// few times a second; elsewhere (a log file, CI) it prints a plain line at
// every tenth of a phase, so logs stay short. Call Clear before printing
// anything else, such as an epoch's summary.
type Bar struct {
	// Unit names what the rate counts ("images", "target words"); "" is
	// "samples".
	Unit string

	w     io.Writer
	tty   bool
	last  time.Time
	phase Phase
	tenth int
	drawn bool
}

// NewBar returns a Bar writing to w (usually os.Stderr).
func NewBar(w io.Writer) *Bar {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil {
			tty = st.Mode()&os.ModeCharDevice != 0
		}
	}
	return &Bar{w: w, tty: tty}
}

// Update shows p; its method value is a Config.Progress.
func (b *Bar) Update(p Progress) {
	if b == nil || b.w == nil { // a Bar not made by NewBar draws nothing
		return
	}
	if p.Phase != b.phase {
		b.phase, b.tenth = p.Phase, 0
	}
	frac := float64(p.Done) / float64(max(p.Total, 1))
	line := fmt.Sprintf("epoch %d/%d [%-30s] %d/%d  %.0f %s/s", p.Epoch, p.Epochs,
		strings.Repeat("=", int(min(frac, 1)*30)), p.Done, p.Total, p.SamplesPerSec, unitOr(b.Unit))
	if p.Phase == Evaluating {
		line = "evaluating " + line
	} else {
		line += fmt.Sprintf("  loss %.4f", p.Loss)
	}
	line += fmt.Sprintf("  ETA %s", p.ETA.Round(time.Second))
	end := p.Done >= p.Total
	if b.tty {
		if time.Since(b.last) < 150*time.Millisecond && !end {
			return
		}
		b.last = time.Now()
		fmt.Fprintf(b.w, "\r%s\x1b[K", line)
		b.drawn = true
		return
	}
	if t := int(frac * 10); t > b.tenth || (end && b.tenth < 10) {
		b.tenth = max(t, b.tenth)
		if end {
			b.tenth = 10
		}
		fmt.Fprintln(b.w, line)
	}
}

// Clear ends the status line before other output and resets for the next
// phase.
func (b *Bar) Clear() {
	if b.drawn {
		fmt.Fprint(b.w, "\r\x1b[K")
		b.drawn = false
	}
	b.tenth, b.phase = 0, ""
}
