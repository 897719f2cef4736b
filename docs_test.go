package plumb_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mdLink matches an inline markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks fails on a relative link in the README, ARCHITECTURE.md or
// a guide under docs/ whose file does not exist, or whose #anchor names no
// heading of the linked markdown file, so that moving a file or renaming
// a section cannot leave the front door pointing nowhere.
func TestDocLinks(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	require.NoError(t, err)
	docs = append(docs, "README.md", "ARCHITECTURE.md", "parity/README.md")
	for _, doc := range docs {
		text, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(stripCode(string(text)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %q: %s does not exist", doc, target, path)
				continue
			}
			if anchor != "" && strings.HasSuffix(path, ".md") {
				body, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Contains(t, headingAnchors(string(body)), anchor, "%s: link %q: no such heading in %s", doc, target, path)
			}
		}
	}
}

// TestReadmeExampleIsExample fails when the README's first Go snippet is
// not the body of Example in example_test.go, line for line, so the code a
// newcomer copies is code that go test compiles and runs.
func TestReadmeExampleIsExample(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(readme), "```go\n")
	require.True(t, ok, "README.md has no Go snippet")
	snippet, _, ok := strings.Cut(rest, "```")
	require.True(t, ok, "README.md's Go snippet does not end")

	src, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	_, rest, ok = strings.Cut(string(src), "func Example() {\n")
	require.True(t, ok, "example_test.go has no func Example")
	body, _, ok := strings.Cut(rest, "\t// Output:")
	require.True(t, ok, "Example has no Output comment")

	assert.Equal(t, codeLines(snippet), codeLines(body))
}

// codeLines returns s's lines without their indentation and without blank
// lines, so a snippet and a function body indented one tab deeper compare
// equal.
func codeLines(s string) []string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// stripCode removes fenced code blocks and inline code spans, whose
// brackets are not links.
func stripCode(s string) string {
	var out strings.Builder
	fenced := false
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(l, "    ") {
			continue
		}
		parts := strings.Split(l, "`")
		for i := 0; i < len(parts); i += 2 { // even parts lie outside code spans
			out.WriteString(parts[i])
		}
		out.WriteString("\n")
	}
	return out.String()
}

// headingAnchors returns the anchors GitHub gives the headings of a
// markdown file: lower case, punctuation dropped, spaces as hyphens.
func headingAnchors(md string) []string {
	var anchors []string
	for _, l := range strings.Split(stripFences(md), "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		title := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var b strings.Builder
		for _, r := range title {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') || r > 127:
				b.WriteRune(r)
			}
		}
		anchors = append(anchors, b.String())
	}
	return anchors
}

// stripFences removes fenced code blocks, whose # lines are not headings.
func stripFences(s string) string {
	var out strings.Builder
	fenced := false
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out.WriteString(l)
			out.WriteString("\n")
		}
	}
	return out.String()
}
