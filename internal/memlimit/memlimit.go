// Package memlimit is a test helper: it runs a piece of a test in a child
// process (the test binary, run again for that one test) whose address
// space is capped a little above what it already uses. A reader that
// allocates what a hostile header claims dies there with "fatal error: out
// of memory", which the parent reports as a test failure, where in the
// test process itself it might pass on a machine with memory to spare.
package memlimit

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// envChild names the test that a child process runs under the limit.
const envChild = "PLUMB_MEMLIMIT_CHILD"

// marker starts the line on which the child reports body's result.
const marker = "memlimit: body returned: "

// Run runs body in a child process whose address space may grow by at
// most headroomMiB beyond what the process holds when body starts (on
// Linux, RLIMIT_AS; elsewhere only the Go runtime's soft limit), and
// returns the error body returned, as text ("" for nil). A crash of the
// child (out of memory, a panic) fails the test with the child's output.
// The calling test must be a top-level test (Run re-runs it by name) that
// calls Run once, first.
func Run(t *testing.T, headroomMiB int, body func() error) string {
	t.Helper()
	if os.Getenv(envChild) == t.Name() {
		limit := int64(headroomMiB) << 20
		debug.SetMemoryLimit(limit)
		if err := capAddressSpace(limit); err != nil {
			fmt.Printf("%s(could not set the limit: %v)\n", marker, err)
			os.Exit(3)
		}
		msg := ""
		if err := body(); err != nil {
			msg = err.Error()
		}
		fmt.Printf("%s%s\n", marker, strconv.Quote(msg))
		os.Exit(0) // the child's only job was body
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v=false")
	// The child exits without running the test's cleanups: its temporary
	// directories go inside one of the parent's, which the parent removes.
	cmd.Env = append(os.Environ(), envChild+"="+t.Name(), "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), marker); ok && err == nil {
			msg, qerr := strconv.Unquote(rest)
			if qerr != nil {
				t.Fatalf("memlimit: child reported %q", rest)
			}
			return msg
		}
	}
	first := ""
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "fatal error") || strings.HasPrefix(line, "panic:") {
			first = line
			break
		}
	}
	head := string(out)
	if len(head) > 2000 {
		head = head[:2000] + "..."
	}
	t.Fatalf("memlimit: the child under a %d MiB limit failed (%v): %s\n%s", headroomMiB, err, first, head)
	return ""
}
