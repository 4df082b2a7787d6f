package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// The documentation is checked against the repository: every relative
// link leads to a file (and heading) that exists, and every zonestream
// command or hack script a page shows exists. The references under
// docs/reference are generated from the code or checked against it
// (reference_test.go).

// repoRoot is the repository, from this package's directory.
var repoRoot = filepath.Join("..", "..", "..")

// markdownFiles are the repository's own pages (not vendored charts or
// test data).
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(repoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules" || d.Name() == ".artifacts") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("found %d pages, want the README, docs/ and every package's README", len(files))
	}
	return files
}

var (
	markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	fence        = regexp.MustCompile("(?s)```[a-z]*\n.*?```")
	inlineCode   = regexp.MustCompile("`[^`\n]+`")
)

// anchors are the ids GitHub gives a page's headings.
func anchors(text string) map[string]bool {
	ids := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(fence.ReplaceAllString(text, ""), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		id := slug(strings.TrimLeft(line, "# "))
		if n := seen[id]; n > 0 {
			ids[id+"-"+string(rune('0'+n))] = true
		} else {
			ids[id] = true
		}
		seen[id]++
	}
	return ids
}

// slug is GitHub's heading id: lower case, punctuation dropped, spaces to
// hyphens.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func TestDocsLinksResolve(t *testing.T) {
	pages := map[string]map[string]bool{}
	read := func(path string) (map[string]bool, bool) {
		if a, ok := pages[path]; ok {
			return a, true
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, false
		}
		pages[path] = anchors(string(data))
		return pages[path], true
	}
	links := 0
	for _, page := range markdownFiles(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := fence.ReplaceAllString(string(data), "")
		for _, m := range markdownLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue // a URL
			}
			links++
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link to %s: no such file", page, target)
				continue
			}
			if anchor == "" || !strings.HasSuffix(path, ".md") {
				continue
			}
			if ids, _ := read(path); !ids[anchor] {
				t.Errorf("%s: link to %s: no heading #%s there", page, target, anchor)
			}
		}
	}
	if links < 100 {
		t.Fatalf("found %d links, the pages have more", links)
	}
}

// knownCommands are the words zonestream takes as its first argument.
func knownCommands(t *testing.T) map[string]bool {
	t.Helper()
	src, err := os.ReadFile("cli.go")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, m := range regexp.MustCompile(`case ((?:"[a-z-]*",? ?)+):`).FindAllStringSubmatch(string(src), -1) {
		for _, w := range regexp.MustCompile(`"([a-z-]*)"`).FindAllStringSubmatch(m[1], -1) {
			known[w[1]] = true
		}
	}
	for _, def := range Stages() {
		known[def.Name] = true
	}
	if len(known) < 10 {
		t.Fatalf("found %d commands in cli.go, want every one", len(known))
	}
	return known
}

func TestDocsCommandsExist(t *testing.T) {
	known := knownCommands(t)
	// zonestream where a shell runs it: first on the line or after a
	// pipe or a separator, after variable assignments.
	zonestream := regexp.MustCompile(`(?:^|&&|;|\||\$\()\s*(?:[A-Z_]+=\S*\s+)*(?:bin/|\./|/)?zonestream((?:\s+[^\s|;&)]+)*)`)
	script := regexp.MustCompile(`(?:^|[\s(])\.?/?(hack/[a-z0-9-]+\.sh)\b`)
	checked := 0
	for _, page := range markdownFiles(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		var snippets []string
		for _, block := range fence.FindAllString(string(data), -1) {
			snippets = append(snippets, strings.Split(block, "\n")...)
		}
		for _, code := range inlineCode.FindAllString(string(data), -1) {
			snippets = append(snippets, strings.Trim(code, "`"))
		}
		for _, line := range snippets {
			line, _, _ = strings.Cut(line, " #") // a comment
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "#") {
				continue
			}
			for _, m := range script.FindAllStringSubmatch(line, -1) {
				if _, err := os.Stat(filepath.Join(repoRoot, m[1])); err != nil {
					t.Errorf("%s: %q runs %s, which does not exist", page, strings.TrimSpace(line), m[1])
				}
				checked++
			}
			for _, m := range zonestream.FindAllStringSubmatch(line, -1) {
				words := strings.Fields(m[1])
				if len(words) == 0 || strings.HasPrefix(words[0], "-") {
					checked++
					continue // the all-in-one
				}
				cmd := words[0]
				if !regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(cmd) {
					continue // a placeholder (collector|dedup), not a command
				}
				checked++
				if !known[cmd] {
					t.Errorf("%s: %q: zonestream has no command %q", page, strings.TrimSpace(line), cmd)
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked %d commands, the pages show more", checked)
	}
}

// A page names commands by what the binary parses, so the check above
// must know a flag-less all-in-one from a command.
func TestCommandsKnowsTheStagesAndTools(t *testing.T) {
	known := knownCommands(t)
	for _, want := range []string{"collector", "planner", "applier", "explain", "plans", "tail", "streams"} {
		if !known[want] {
			t.Errorf("knownCommands() misses %q", want)
		}
	}
}
