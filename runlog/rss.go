package runlog

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// RSS returns the process's resident set size now and at its peak, in
// bytes, from /proc/self/status (VmRSS, VmHWM); both are 0 where that
// file does not exist (outside Linux).
func RSS() (now, peak int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseInt(string(f[1]), 10, 64)
		if err != nil {
			continue
		}
		switch string(f[0]) {
		case "VmRSS:":
			now = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return now, peak
}
