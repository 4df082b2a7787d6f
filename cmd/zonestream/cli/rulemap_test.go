package cli

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The rule maps of docs/ (tables headed "| rule | where it lives | test |")
// name where each rule lives and the tests that prove it. Every name must
// exist where the cell says, so that a rename, a move or a removed test
// cannot leave the map pointing at nothing:
//
//   - a word before a name sets the package it is read in ("dedup
//     `run.apply`": package dedup); so does a path ("`provider/webhook`")
//     and a package-qualified name ("`kubestatus.ReadyCondition`"), for the
//     names after it in the cell;
//   - `T.m` is a method or field m of type T in that package, or, when T is
//     a package, m declared in package T (`events.Received.Live`: type
//     Received of package events, its method or field Live);
//   - a bare name is a function, method, type, constant or variable of that
//     package (of any package, when the cell names none);
//   - a file name is a file of that package, a path one of the repository;
//   - a command ("`zonestream plans`") sets package cli, the binary's commands.
func TestRuleMapNamesWhatExists(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	var rows []ruleRow
	for _, page := range markdownFiles(t) {
		if !strings.Contains(filepath.ToSlash(page), "/docs/") {
			continue // the packages' own tables read "| rule | where | test |"
		}
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, ruleMapRows(string(text))...)
	}
	if len(rows) < 40 {
		t.Fatalf("found %d rule map rows in docs/, want 40 or more", len(rows))
	}
	repo := indexRepository(t, root)
	testName := regexp.MustCompile(`\b(Test|Fuzz)[A-Z][A-Za-z0-9]*`)
	for _, r := range rows {
		for _, name := range testName.FindAllString(r.test, -1) {
			if !repo.tests[name] {
				t.Errorf("rule %q: no test %s", r.rule, name)
			}
		}
		if !testName.MatchString(r.test) && !strings.Contains(r.test, "tests above") && !strings.Contains(r.test, "provider tests") {
			t.Errorf("rule %q names no test", r.rule)
		}
		for _, problem := range repo.check(r.where) {
			t.Errorf("rule %q: %s", r.rule, problem)
		}
	}
}

// A cell naming what does not exist is caught, whichever part is wrong.
func TestRuleMapCheckCatchesWrongNames(t *testing.T) {
	repo := indexRepository(t, filepath.Join("..", "..", ".."))
	for _, cell := range []string{
		"dedup `run.apply`",                    // no method apply on dedup's run
		"planner `nosuch.plan`",                // no type nosuch in planner
		"dedup `run.plan`",                     // planner's, not dedup's
		"`events.NoSuchName`",                  // not in package events
		"collector `run.runOnce`",              // a method of Collector, not of run
		"planner `nosuchfile.go`",              // no such file in planner
		"`provider/webhook` (`Provider.Nope`)", // no method Nope
	} {
		if len(repo.check(cell)) == 0 {
			t.Errorf("%s: accepted", cell)
		}
	}
	for _, cell := range []string{
		"planner `run.plan` (`desiredEntry.live`)",
		"collector `Collector.runOnce`, `marks.go` (`announce`, `heartbeat`)",
		"`events.Received.Live`, `events/marks.go`",
		"collector `kubestatus.ReadyCondition`, `Status.report`",
		"`provider/webhook` (`Provider.Apply`, `checkMediaType`)",
	} {
		if p := repo.check(cell); len(p) > 0 {
			t.Errorf("%s: %q", cell, p)
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

// goPackage is what one package (all directories with that package name)
// declares outside its tests.
type goPackage struct {
	dirs    []string
	decls   map[string]bool            // functions, types, constants, variables, and method names
	members map[string]map[string]bool // type -> its methods and fields
	files   map[string]bool            // base names of its files
}

// repository indexes the repository's Go code by package name.
type repository struct {
	root     string
	packages map[string]*goPackage
	byDir    map[string]string // directory (slash-separated, from root) -> package name
	tests    map[string]bool
}

func indexRepository(t *testing.T, root string) *repository {
	t.Helper()
	repo := &repository{root: root, packages: map[string]*goPackage{}, byDir: map[string]string{}, tests: map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, "_test.go") {
			for _, decl := range f.Decls {
				if fn, ok := decl.(*ast.FuncDecl); ok && (strings.HasPrefix(fn.Name.Name, "Test") || strings.HasPrefix(fn.Name.Name, "Fuzz")) {
					repo.tests[fn.Name.Name] = true
				}
			}
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		repo.add(filepath.ToSlash(rel), filepath.Base(path), f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

func (r *repository) add(dir, file string, f *ast.File) {
	name := f.Name.Name
	p := r.packages[name]
	if p == nil {
		p = &goPackage{decls: map[string]bool{}, members: map[string]map[string]bool{}, files: map[string]bool{}}
		r.packages[name] = p
	}
	if !slices.Contains(p.dirs, dir) {
		p.dirs = append(p.dirs, dir)
	}
	r.byDir[dir] = name
	p.files[file] = true
	member := func(typ, m string) {
		if p.members[typ] == nil {
			p.members[typ] = map[string]bool{}
		}
		p.members[typ][m] = true
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			p.decls[d.Name.Name] = true
			if d.Recv != nil && len(d.Recv.List) == 1 {
				member(receiverType(d.Recv.List[0].Type), d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					p.decls[s.Name.Name] = true
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							for _, n := range field.Names {
								member(s.Name.Name, n.Name)
							}
							if len(field.Names) == 0 {
								member(s.Name.Name, receiverType(field.Type))
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						p.decls[n.Name] = true
					}
				}
			}
		}
	}
}

// receiverType is the name of a receiver's (or embedded field's) type:
// T of T, *T, T[K] and pkg.T.
func receiverType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiverType(x.X)
	case *ast.IndexExpr:
		return receiverType(x.X)
	case *ast.IndexListExpr:
		return receiverType(x.X)
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.Ident:
		return x.Name
	}
	return ""
}

var (
	cellItem  = regexp.MustCompile("([A-Za-z0-9_']*)\\s*`([^`]+)`")
	goName    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	goPathish = regexp.MustCompile(`^[a-z0-9_]+(/[a-z0-9_.]+)+$`)
)

// check returns what a "where it lives" cell names that does not exist.
func (r *repository) check(cell string) []string {
	var problems []string
	pkg := "" // the package names are read in; "" for any
	for _, m := range cellItem.FindAllStringSubmatch(cell, -1) {
		word, item := m[1], m[2]
		if _, ok := r.packages[word]; ok {
			pkg = word
		}
		switch {
		case strings.HasPrefix(item, "zonestream "):
			pkg = "cli" // a command of the binary (cmd/zonestream/cli)
		case strings.Contains(item, " "):
		case strings.HasSuffix(item, ".go") && strings.Contains(item, "/"):
			if _, err := os.Stat(filepath.Join(r.root, filepath.FromSlash(item))); err != nil {
				problems = append(problems, "no file "+item)
			}
		case strings.HasSuffix(item, ".go"):
			if !r.hasFile(pkg, item) {
				problems = append(problems, "no file "+item+" in "+orAny(pkg))
			}
		case goPathish.MatchString(item):
			name, ok := r.dirPackage(item)
			if !ok {
				problems = append(problems, "no package at "+item)
				continue
			}
			pkg = name
		case goName.MatchString(item):
			in, ok := r.resolve(pkg, strings.Split(item, "."))
			if !ok {
				problems = append(problems, "nothing declares "+item+" in "+orAny(pkg))
				continue
			}
			pkg = in
		}
	}
	return problems
}

func orAny(pkg string) string {
	if pkg == "" {
		return "any package"
	}
	return "package " + pkg
}

func (r *repository) hasFile(pkg, file string) bool {
	for name, p := range r.packages {
		if (pkg == "" || name == pkg) && p.files[file] {
			return true
		}
	}
	return false
}

// dirPackage is the package in the directory a path ends with
// ("provider/webhook": services/applier/provider/webhook).
func (r *repository) dirPackage(path string) (string, bool) {
	for dir, name := range r.byDir {
		if dir == path || strings.HasSuffix(dir, "/"+path) {
			return name, true
		}
	}
	return "", false
}

// resolve finds parts (T.m, pkg.T.m, name, pkg.name) in package pkg, or in
// any package when pkg is "", and returns the package it is declared in.
func (r *repository) resolve(pkg string, parts []string) (string, bool) {
	if pkg != "" {
		if r.declares(pkg, parts) {
			return pkg, true
		}
	} else {
		for name := range r.packages {
			if r.declares(name, parts) {
				return name, true
			}
		}
	}
	// A package-qualified name: its first part is the package.
	if _, ok := r.packages[parts[0]]; ok && len(parts) > 1 && r.declares(parts[0], parts[1:]) {
		return parts[0], true
	}
	return "", false
}

func (r *repository) declares(pkg string, parts []string) bool {
	p := r.packages[pkg]
	switch len(parts) {
	case 1:
		return p.decls[parts[0]]
	case 2:
		return p.members[parts[0]][parts[1]]
	}
	return false
}
