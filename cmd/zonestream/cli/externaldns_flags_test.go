package cli

import (
	"bufio"
	"flag"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/stage"
)

// externalDNSFlag is one line of testdata/externaldns-v0.23.0-flags.txt.
type externalDNSFlag struct{ name, kind string }

func (f externalDNSFlag) boolean() bool { return f.kind == "bool" }

// repeatable: ExternalDNS takes the flag more than once.
func (f externalDNSFlag) repeatable() bool {
	return f.kind == "strings" || f.kind == "stringmap" || f.kind == "enums"
}

// notYetImplemented are ExternalDNS flags zonestream neither implements nor
// ignores yet: they change what a run does, so they are to be implemented,
// not accepted and dropped.
var notYetImplemented = []string{}

func readExternalDNSFlags(t *testing.T) []externalDNSFlag {
	t.Helper()
	f, err := os.Open("testdata/externaldns-v0.23.0-flags.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var flags []externalDNSFlag
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			name, kind, _ := strings.Cut(line, " ")
			flags = append(flags, externalDNSFlag{name, kind})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(flags) < 170 {
		t.Fatalf("only %d flags in the list", len(flags))
	}
	return flags
}

// stageFlags are the flags the stages and every process define, each as
// it runs alone: what zonestream implements.
func stageFlags() map[string]bool {
	defined := map[string]bool{}
	for _, def := range stages {
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		var opts stage.Options
		opts.RegisterFlags(fs)
		opts.Election.RegisterFlags(fs)
		def().Standalone(fs)
		fs.VisitAll(func(f *flag.Flag) { defined[f.Name] = true })
	}
	return defined
}

// sampleValue is a value each flag takes, ours as ExternalDNS'.
func sampleValue(f externalDNSFlag) string {
	switch f.name {
	case "provider":
		return "inmemory"
	case "source":
		return "service"
	case "policy":
		return "sync"
	case "registry":
		return "txt"
	case "log-level":
		return "info"
	case "log-format":
		return "text"
	case "managed-record-types":
		return "A"
	case "service-type-filter":
		return "LoadBalancer"
	case "metrics-address":
		return ":0"
	}
	switch f.kind {
	case "bool":
		return "true"
	case "duration":
		return "30s"
	case "int", "int64":
		return "1"
	case "stringmap":
		return "k=v"
	}
	return "x"
}

// Every flag of ExternalDNS v0.23.0 parses on the all-in-one, as ExternalDNS
// takes it: implemented by a stage (under its name or ExternalDNS'), or
// ignored with a reason; nothing else, and the ignored table is honest.
func TestEveryExternalDNSFlagParses(t *testing.T) {
	list := readExternalDNSFlags(t)
	inList := map[string]externalDNSFlag{}
	for _, f := range list {
		inList[f.name] = f
	}
	defined := stageFlags()
	renamed := stage.RenamedFlags()
	ignored := map[string]stage.IgnoredFlag{}
	for _, f := range stage.IgnoredFlagTable() {
		l, ok := inList[f.Name]
		switch {
		case !ok:
			t.Errorf("ignored --%s is no flag of ExternalDNS v0.23.0", f.Name)
		case defined[f.Name]:
			t.Errorf("ignored --%s is defined by a stage", f.Name)
		case ignored[f.Name].Name != "":
			t.Errorf("--%s is ignored twice", f.Name)
		case l.boolean() != f.Boolean:
			t.Errorf("ignored --%s: boolean %v, ExternalDNS' is %s", f.Name, f.Boolean, l.kind)
		case f.Reason == "":
			t.Errorf("ignored --%s: no reason", f.Name)
		}
		ignored[f.Name] = f
	}
	for name, ours := range renamed {
		if _, ok := inList[name]; !ok || defined[name] || ignored[name].Name != "" || !defined[ours] {
			t.Errorf("renamed --%s (--%s): in the list %v, defined %v, ignored %v, --%s defined %v",
				name, ours, ok, defined[name], ignored[name].Name != "", ours, defined[ours])
		}
	}
	var parsed []externalDNSFlag
	for _, f := range list {
		n := 0
		for _, is := range []bool{defined[f.name], ignored[f.name].Name != "", renamed[f.name] != "", slices.Contains(notYetImplemented, f.name)} {
			if is {
				n++
			}
		}
		if n != 1 {
			t.Errorf("--%s: implemented %v, ignored %v, renamed %v, not yet implemented %v: want exactly one",
				f.name, defined[f.name], ignored[f.name].Name != "", renamed[f.name] != "", slices.Contains(notYetImplemented, f.name))
		}
		if !slices.Contains(notYetImplemented, f.name) {
			parsed = append(parsed, f)
		}
	}
	t.Logf("ExternalDNS v0.23.0's %d flags: %d taken by a stage (%d of them under another name), %d ignored with a reason",
		len(list), len(list)-len(ignored)-len(notYetImplemented), len(renamed), len(ignored))

	// ExternalDNS' syntaxes, on one command line each, as a Deployment has it.
	forms := map[string]func(f externalDNSFlag) []string{
		"--flag value": func(f externalDNSFlag) []string {
			if f.boolean() {
				return []string{"--" + f.name}
			}
			return []string{"--" + f.name, sampleValue(f)}
		},
		"--flag=value, repeated": func(f externalDNSFlag) []string {
			a := []string{"--" + f.name + "=" + sampleValue(f)}
			if f.repeatable() {
				a = append(a, a[0])
			}
			return a
		},
		"--no-flag": func(f externalDNSFlag) []string {
			if f.boolean() {
				return []string{"--no-" + f.name}
			}
			return []string{"--" + f.name + "=" + sampleValue(f)}
		},
	}
	for form, args := range forms {
		var cmdline []string
		for _, f := range parsed {
			cmdline = append(cmdline, args(f)...)
		}
		a := NewAllInOne()
		a.fs.SetOutput(io.Discard)
		if _, err := a.Parse(cmdline); err != nil {
			t.Errorf("%s: %v", form, err)
			continue
		}
		providersTaken := slices.ContainsFunc(a.stages, func(d stage.Definition) bool { return d.TakeArgs != nil })
		given := map[string]bool{}
		for _, g := range a.ignored.Given() {
			given[g.Name] = true
		}
		for name, f := range ignored {
			if !given[name] && !(f.Provider && providersTaken) {
				t.Errorf("%s: ignored --%s was not noted", form, name)
			}
		}
	}
	// One by one, so that a flag that eats the next one shows.
	for _, f := range parsed {
		for form, args := range forms {
			a := NewAllInOne()
			a.fs.SetOutput(io.Discard)
			if _, err := a.Parse(append(args(f), "--txt-owner-id=next")); err != nil {
				t.Errorf("%s %s: %v", form, f.name, err)
			} else if v := a.fs.Lookup("txt-owner-id").Value.String(); v != "next" {
				t.Errorf("%s %s: the next flag was taken as its value", form, f.name)
			}
		}
	}
}

// The migration page's table of ExternalDNS' flags names each flag of the
// list once, and says of each what zonestream does with it, as the code does.
func TestReadmeExternalDNSFlagTable(t *testing.T) {
	readme, err := os.ReadFile("../../../docs/migrate-from-externaldns.md")
	if err != nil {
		t.Fatal(err)
	}
	const start, end = "<!-- externaldns-flags -->", "<!-- /externaldns-flags -->"
	_, table, ok := strings.Cut(string(readme), start)
	table, _, ok2 := strings.Cut(table, end)
	if !ok || !ok2 {
		t.Fatalf("docs/migrate-from-externaldns.md has no %s ... %s table", start, end)
	}
	defined, renamed := stageFlags(), stage.RenamedFlags()
	ignored := map[string]bool{}
	for _, f := range stage.IgnoredFlagTable() {
		ignored[f.Name] = true
	}
	flagRE := regexp.MustCompile("`--([a-z0-9-]+)`")
	seen := map[string]bool{}
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(row, "|")
		if len(cells) < 4 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		does := strings.TrimSpace(cells[2])
		for _, m := range flagRE.FindAllStringSubmatch(cells[1], -1) {
			name := m[1]
			if seen[name] {
				t.Errorf("docs/migrate-from-externaldns.md: --%s twice", name)
			}
			seen[name] = true
			var want bool
			switch {
			case strings.HasPrefix(does, "ignored"):
				want = ignored[name]
			case strings.HasPrefix(does, "not yet implemented"):
				want = slices.Contains(notYetImplemented, name)
			default:
				want = defined[name] || renamed[name] != ""
			}
			if !want {
				t.Errorf("docs/migrate-from-externaldns.md: --%s: %q, not what zonestream does", name, does)
			}
		}
	}
	for _, f := range readExternalDNSFlags(t) {
		if !seen[f.name] {
			t.Errorf("docs/migrate-from-externaldns.md: no --%s", f.name)
		}
		delete(seen, f.name)
	}
	for name := range seen {
		t.Errorf("docs/migrate-from-externaldns.md: --%s is no flag of ExternalDNS v0.23.0", name)
	}
}
