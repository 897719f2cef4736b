package data

import "os"

// EnvDir names the environment variable that points at a local data
// directory, used when no directory is given on the command line.
const EnvDir = "PLUMB_DATA"

// Dir returns flagValue when it is set, else $PLUMB_DATA (possibly "",
// meaning "no directory: use the embedded copy").
func Dir(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	return os.Getenv(EnvDir)
}
