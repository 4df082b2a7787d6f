package main

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README's rule maps (tables headed "| rule | where it lives | test |")
// name a function or file for every rule and the tests that prove it.
// Every name must exist, so a rename or a removed test cannot leave the map
// pointing at nothing.
func TestRuleMapNamesWhatExists(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := ruleMapRows(string(readme))
	if len(rows) < 40 {
		t.Fatalf("found %d rule map rows in README.md, want 40 or more", len(rows))
	}
	decls, tests, files := declaredNames(t, root)
	testName := regexp.MustCompile(`\b(Test|Fuzz)[A-Z][A-Za-z0-9]*`)
	code := regexp.MustCompile("`([^`]+)`")
	ident := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)
	for _, r := range rows {
		for _, name := range testName.FindAllString(r.test, -1) {
			if !tests[name] {
				t.Errorf("rule %q: no test %s", r.rule, name)
			}
		}
		if !testName.MatchString(r.test) && !strings.Contains(r.test, "tests above") && !strings.Contains(r.test, "provider tests") {
			t.Errorf("rule %q names no test", r.rule)
		}
		for _, m := range code.FindAllStringSubmatch(r.where, -1) {
			what := m[1]
			switch {
			case strings.HasSuffix(what, ".go"):
				if !files[filepath.Base(what)] {
					t.Errorf("rule %q: no file %s", r.rule, what)
				}
			case ident.MatchString(what):
				parts := strings.Split(what, ".")
				if last := parts[len(parts)-1]; !decls[last] {
					t.Errorf("rule %q: nothing declares %s", r.rule, what)
				}
			}
		}
	}
}

type ruleRow struct{ rule, where, test string }

func ruleMapRows(readme string) []ruleRow {
	var rows []ruleRow
	in := false
	sc := bufio.NewScanner(strings.NewReader(readme))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "| rule | where it lives | test |"):
			in = true
		case !strings.HasPrefix(line, "|"):
			in = false
		case in && !strings.HasPrefix(line, "| ---"):
			// A \| inside a cell is a literal bar.
			cells := strings.Split(strings.ReplaceAll(line, `\|`, "¦"), "|")
			if len(cells) >= 5 {
				rows = append(rows, ruleRow{strings.TrimSpace(cells[1]), cells[2], cells[3]})
			}
		}
	}
	return rows
}

// declaredNames are the names declared in the repository's Go files
// (functions, methods, types, fields, constants, variables), its test and
// fuzz functions, and the base names of its files.
func declaredNames(t *testing.T, root string) (decls, tests, files map[string]bool) {
	decls, tests, files = map[string]bool{}, map[string]bool{}, map[string]bool{}
	funcDecl := regexp.MustCompile(`^func (?:\([^)]*\) )?([A-Za-z_][A-Za-z0-9_]*)`)
	otherDecl := regexp.MustCompile(`^(?:type|const|var) ([A-Za-z_][A-Za-z0-9_]*)|^\t([A-Za-z_][A-Za-z0-9_]*)\s+(?:=|[A-Za-z*\[])`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		files[d.Name()] = true
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if m := funcDecl.FindStringSubmatch(line); m != nil {
				decls[m[1]] = true
				if strings.HasSuffix(path, "_test.go") && (strings.HasPrefix(m[1], "Test") || strings.HasPrefix(m[1], "Fuzz")) {
					tests[m[1]] = true
				}
			} else if m := otherDecl.FindStringSubmatch(line); m != nil {
				decls[m[1]+m[2]] = true // a type, constant, variable or field
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return decls, tests, files
}
