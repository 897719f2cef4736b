package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/plumbml/plumb/parity"
)

// parityReport runs every golden case recorded from TensorFlow and prints
// the per-op error table that `go test ./parity/... -v` prints.
func parityReport(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("parity", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "parity/testdata", "folder of golden cases (the repository's, from its root)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	rows, err := parity.Run(*dir)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, parity.FormatTable(rows))
	for _, r := range rows {
		if !r.Pass {
			return fmt.Errorf("parity: %s %s fails its bound", r.Op, r.DType)
		}
	}
	return nil
}
