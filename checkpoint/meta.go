package checkpoint

import (
	"fmt"
	"maps"
	"strings"
)

// checkMeta refuses metadata keys that would collide with the checksums
// Save records under checksumPrefix.
func checkMeta(meta map[string]string) error {
	for k := range meta {
		if strings.HasPrefix(k, checksumPrefix) {
			return fmt.Errorf("checkpoint: metadata key %q: the prefix %q is reserved for the tensors' checksums", k, checksumPrefix)
		}
	}
	return nil
}

// Meta returns the metadata SaveMeta wrote in the file at path, without
// the checksums (an empty map for a file that has none). It reads and
// validates the header alone, never the tensors, so it costs no more than
// the header, which is bounded as Load bounds it.
func Meta(path string) (map[string]string, error) {
	f, size, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := readHeader(f, size)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: read %s: %w", path, err)
	}
	out := maps.Clone(h.meta)
	if out == nil {
		out = map[string]string{}
	}
	maps.DeleteFunc(out, func(k, _ string) bool { return strings.HasPrefix(k, checksumPrefix) })
	return out, nil
}
