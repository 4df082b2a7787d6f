package cli

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/stage"
)

// The references of docs/reference are generated from the code, so that
// they cannot drift from it: each test renders its page and compares;
// -update writes it.
var updateReferences = flag.Bool("update", false, "write docs/reference's generated pages from the code")

// checkGenerated compares page with what the code renders, or writes it.
func checkGenerated(t *testing.T, page string, rendered []byte) {
	t.Helper()
	path := filepath.Join(repoRoot, "docs", "reference", page)
	if *updateReferences {
		if err := os.WriteFile(path, rendered, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, rendered) {
		t.Fatalf("docs/reference/%s is not what the code says: go test ./cmd/zonestream/cli -run %s -update", page, t.Name())
	}
}

const generatedNote = "<!-- Generated from the code by %s (cmd/zonestream/cli): do not edit; `go test ./cmd/zonestream/cli -run %s -update` writes it. -->\n"

// cell makes text safe in a table cell.
func cell(text string) string {
	return strings.ReplaceAll(strings.ReplaceAll(text, "|", `\|`), "\n", " ")
}

// flagTable renders the flags of fs that keep says to keep.
func flagTable(b *bytes.Buffer, fs *flag.FlagSet, keep func(string) bool) {
	b.WriteString("| flag | default | meaning |\n| --- | --- | --- |\n")
	fs.VisitAll(func(f *flag.Flag) {
		if !keep(f.Name) {
			return
		}
		def := f.DefValue
		if def != "" {
			def = "`" + def + "`"
		}
		// Defaults read off the machine are said, not shown.
		if host, _ := os.Hostname(); host != "" && strings.Contains(f.DefValue, host) {
			def = "the host name and the process id"
		}
		if f.DefValue == defaultDataDir() {
			def = "`$XDG_STATE_HOME/zonestream`, else `~/.local/state/zonestream`"
		}
		fmt.Fprintf(b, "| `--%s` | %s | %s |\n", f.Name, cell(def), cell(f.Usage))
	})
}

// processFlags are the flags every process has.
func processFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	var opts stage.Options
	opts.RegisterFlags(fs)
	opts.Election.RegisterFlags(fs)
	return fs
}

func TestFlagReference(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("# Flags\n\n")
	fmt.Fprintf(&b, generatedNote, "TestFlagReference", "TestFlagReference")
	b.WriteString(`
Every flag also reads ` + "`$EXTERNAL_DNS_<FLAG_IN_UPPER_SNAKE>`" + `, as ExternalDNS'
do; the command line wins. A secret flag has a ` + "`--<flag>-file`" + ` twin. A boolean
is turned off with ` + "`--<flag>=false`" + ` or ` + "`--no-<flag>`" + `. How they are used:
[the binary](../install/binary.md), [migrating from ExternalDNS](../migrate-from-externaldns.md).
`)
	common := processFlags()
	isCommon := func(name string) bool { return common.Lookup(name) != nil }
	ignored := map[string]stage.IgnoredFlag{}
	for _, f := range stage.IgnoredFlagTable() {
		ignored[f.Name] = f
	}
	b.WriteString("\n## Every process\n\n")
	flagTable(&b, common, func(string) bool { return true })

	inStage := map[string]bool{}
	for _, def := range Stages() {
		fs := processFlags()
		def.Standalone(fs)
		fmt.Fprintf(&b, "\n## zonestream %s\n\n", def.Name)
		flagTable(&b, fs, func(name string) bool {
			inStage[name] = true
			return !isCommon(name) && ignored[name].Name == ""
		})
	}

	a := NewAllInOne()
	b.WriteString("\n## The all-in-one only (`zonestream`)\n\nBeside every stage's flags above:\n\n")
	flagTable(&b, a.FlagSet(), func(name string) bool {
		return !inStage[name] && !isCommon(name) && ignored[name].Name == ""
	})

	b.WriteString("\n## ExternalDNS' flags taken and ignored\n\n" +
		"A command line of ExternalDNS runs as it is; these flags are taken, logged once at start, and do nothing.\n\n" +
		"| flag | why |\n| --- | --- |\n")
	for _, f := range stage.IgnoredFlagTable() {
		fmt.Fprintf(&b, "| `--%s` | %s |\n", f.Name, cell(f.Reason))
	}
	checkGenerated(t, "flags.md", b.Bytes())
}

// metric is one metric the code defines.
type metric struct {
	name, kind, help string
	labels           []string
	file             string
}

// definedMetrics finds every Prometheus metric the repository's code
// defines: each prometheus.<Kind>Opts literal, with the labels of the
// vector it is made into.
func definedMetrics(t *testing.T) []metric {
	t.Helper()
	var out []metric
	fset := token.NewFileSet()
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		labelsOf := map[*ast.CompositeLit][]string{}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			if opts, ok := call.Args[0].(*ast.CompositeLit); ok {
				labelsOf[opts] = stringList(call.Args[1])
			}
			return true
		})
		rel, _ := filepath.Rel(repoRoot, path)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			sel, ok := lit.Type.(*ast.SelectorExpr)
			if !ok || !strings.HasSuffix(sel.Sel.Name, "Opts") {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "prometheus" {
				return true
			}
			m := metric{kind: strings.ToLower(strings.TrimSuffix(sel.Sel.Name, "Opts")), labels: labelsOf[lit], file: filepath.ToSlash(rel)}
			for _, e := range lit.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				switch kv.Key.(*ast.Ident).Name {
				case "Name":
					m.name = constantString(kv.Value)
				case "Help":
					m.help = constantString(kv.Value)
				}
			}
			if m.name != "" {
				out = append(out, m)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b metric) int { return strings.Compare(a.name, b.name) })
	return slices.CompactFunc(out, func(a, b metric) bool { return a.name == b.name })
}

// constantString is a string literal, or a sum of them.
func constantString(e ast.Expr) string {
	switch v := e.(type) {
	case *ast.BasicLit:
		s, _ := strconv.Unquote(v.Value)
		return s
	case *ast.BinaryExpr:
		return constantString(v.X) + constantString(v.Y)
	case *ast.ParenExpr:
		return constantString(v.X)
	}
	return ""
}

// stringList is a []string{...} literal's strings.
func stringList(e ast.Expr) []string {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	var out []string
	for _, el := range lit.Elts {
		if s := constantString(el); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func TestMetricReference(t *testing.T) {
	metrics := definedMetrics(t)
	if len(metrics) < 60 {
		t.Fatalf("found %d metrics in the code, want every one", len(metrics))
	}
	var b bytes.Buffer
	b.WriteString("# Metrics\n\n")
	fmt.Fprintf(&b, generatedNote, "TestMetricReference", "TestMetricReference")
	b.WriteString(`
Every metric a zonestream process can serve on ` + "`--metrics-address`" + ` (` + "`/metrics`" + `),
found in the code. ` + "`external_dns_*`" + ` ones mean what ExternalDNS' do. What to
watch and alert on: [metrics and alerts](../operations/metrics.md).

| metric | type | labels | meaning | defined in |
| --- | --- | --- | --- | --- |
`)
	for _, m := range metrics {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | `%s` |\n", m.name, m.kind, cell(strings.Join(m.labels, ", ")), cell(m.help), m.file)
	}
	checkGenerated(t, "metrics.md", b.Bytes())
}

// Every annotation a source reads (a constant Annotation* of the collector's
// code) is on the annotations page.
func TestAnnotationReference(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(repoRoot, "docs", "reference", "annotations.md"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := 0
	err = filepath.WalkDir(filepath.Join(repoRoot, "services", "collector"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !regexp.MustCompile(`^Annotation[A-Z]`).MatchString(name.Name) || strings.HasPrefix(name.Name, "AnnotationPrefix") || i >= len(vs.Values) {
						continue
					}
					key := constantString(vs.Values[i])
					if key == "" {
						continue // another constant's value: counted where it is defined
					}
					found++
					// A key with a dot is a whole annotation of its own
					// (external-dns.ambassador-service), not under a prefix.
					full := "external-dns.alpha.kubernetes.io/" + key
					if strings.Contains(key, ".") {
						full = key
					}
					if !strings.Contains(string(page), "`"+full+"`") {
						t.Errorf("%s: %s = %q is read by a source but not on docs/reference/annotations.md", path, name.Name, key)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 10 {
		t.Fatalf("found %d annotations in the collector's code, want every one", found)
	}
}
