package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/plumbml/plumb/models/mnist"
)

// progressBar redraws one status line on a terminal (a few times a second)
// and prints a plain line every 10% of an epoch elsewhere, so logs stay short.
type progressBar struct {
	w     io.Writer
	tty   bool
	last  time.Time
	tenth int
	drawn bool
}

func newProgressBar(w io.Writer) *progressBar {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil {
			tty = st.Mode()&os.ModeCharDevice != 0
		}
	}
	return &progressBar{w: w, tty: tty}
}

func (p *progressBar) update(pr mnist.Progress) {
	frac := float64(pr.Done) / float64(max(pr.Total, 1))
	line := fmt.Sprintf("epoch %d/%d [%-30s] %d/%d  %.0f samples/s  loss %.4f  ETA %s",
		pr.Epoch, pr.Epochs, strings.Repeat("=", int(frac*30)), pr.Done, pr.Total, pr.SamplesPerSec, pr.Loss,
		pr.ETA.Round(time.Second))
	if p.tty {
		if time.Since(p.last) < 150*time.Millisecond && pr.Done < pr.Total {
			return
		}
		p.last = time.Now()
		fmt.Fprintf(p.w, "\r%s\x1b[K", line)
		p.drawn = true
		return
	}
	if t := int(frac * 10); t > p.tenth || pr.Done == pr.Total {
		p.tenth = t
		fmt.Fprintln(p.w, line)
	}
}

// clear ends the status line before other output and resets for the next epoch.
func (p *progressBar) clear() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
	p.tenth = 0
}
