package stage

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/pflag"
)

// Flags are registered on Go's flag.FlagSet (which takes -flag and --flag
// alike, as ExternalDNS' command lines need); the help prints them as
// Kubernetes tools do, --flag, with pflag, grouped by what they do.

// HelpFlag is "help": -h, -help, --help ask for the help of a command.
const HelpFlag = "help"

// HelpIgnoredFlag lists the ExternalDNS flags zonestream takes and ignores.
const HelpIgnoredFlag = "help-ignored"

// Help is what the help of a command line says beyond its flags.
type Help struct {
	// Usage is the synopsis: "zonestream collector [flags]".
	Usage string
	// Summary follows the synopsis (the subcommands of zonestream).
	Summary string
}

// TakenFlag is a flag another parser of the command reads (ExternalDNS'
// own, for its providers in a build with -tags externaldns).
type TakenFlag struct {
	Name, Usage string
	Boolean     bool
}

type helpInfo struct {
	Help
	// group of a flag, by name, as it was registered.
	group map[string]string
	taken []TakenFlag
}

// helps are the help of each flag set, as long as it lives: tests and
// benchmarks build many.
var (
	helpsMu sync.Mutex
	helps   = map[weak.Pointer[flag.FlagSet]]*helpInfo{}
)

func infoOf(fs *flag.FlagSet) *helpInfo {
	key := weak.Make(fs)
	helpsMu.Lock()
	defer helpsMu.Unlock()
	h := helps[key]
	if h == nil {
		h = &helpInfo{group: map[string]string{}}
		helps[key] = h
		runtime.AddCleanup(fs, func(key weak.Pointer[flag.FlagSet]) {
			helpsMu.Lock()
			defer helpsMu.Unlock()
			delete(helps, key)
		}, key)
	}
	return h
}

// Describe gives fs's command line its synopsis and summary for --help.
func Describe(fs *flag.FlagSet, h Help) { infoOf(fs).Help = h }

// Grouped runs register, and the flags it defines on fs are listed under
// group in the help, unless their name puts them in a group of their own
// (the NATS flags, the ownership flags, ...).
func Grouped(fs *flag.FlagSet, group string, register func()) {
	before := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { before[f.Name] = true })
	register()
	info := infoOf(fs)
	fs.VisitAll(func(f *flag.Flag) {
		if !before[f.Name] {
			info.group[f.Name] = group
		}
	})
}

// Took notes the flags another parser of fs's command line reads: the
// help lists them as read, and a misspelled flag may be one of them.
func Took(fs *flag.FlagSet, flags []TakenFlag) {
	info := infoOf(fs)
	info.taken = append(info.taken, flags...)
}

// The groups of the help, in order.
const (
	GroupNATS       = "NATS (the bus)"
	GroupSources    = "Kubernetes sources (collector)"
	GroupScope      = "Domains and record types"
	GroupDedup      = "Merging (dedup)"
	GroupPlanner    = "Planning (planner)"
	GroupProvider   = "Provider (applier)"
	GroupExternal   = "ExternalDNS providers' flags (read by ExternalDNS' own parser in this build)"
	GroupRegistry   = "Registry and ownership"
	GroupSafety     = "Safety"
	GroupPortal     = "Portal"
	GroupOperations = "Operations (metrics, logs, leader election)"
	GroupOther      = "Other"
)

var groupOrder = []string{GroupNATS, GroupSources, GroupScope, GroupDedup, GroupPlanner, GroupProvider,
	GroupExternal, GroupRegistry, GroupSafety, GroupPortal, GroupOperations, GroupOther}

// StageGroup is the help group of a stage's own flags.
func StageGroup(stageName string) string {
	switch stageName {
	case "collector":
		return GroupSources
	case "dedup":
		return GroupDedup
	case "planner":
		return GroupPlanner
	case "applier":
		return GroupProvider
	case "portal":
		return GroupPortal
	}
	return GroupOther
}

// groupByName puts the flags that do the same thing, whoever registers
// them, in one group.
func groupByName(name string) string {
	switch {
	case strings.HasPrefix(name, "nats-") || name == "data-dir" || name == "heartbeat-interval":
		return GroupNATS
	case name == "kubeconfig" || name == "master":
		return GroupSources
	case strings.HasPrefix(name, "txt-") || name == "registry" || name == "migrate-from-txt-owner" || name == "crd-registry-namespace":
		return GroupRegistry
	case slices.Contains([]string{"domain-filter", "exclude-domains", "regex-domain-filter", "regex-domain-exclusion",
		"managed-record-types", "exclude-record-types", "zone-id-filter", "zone-name-filter"}, name):
		return GroupScope
	case slices.Contains([]string{"policy", "dry-run", "once", "once-timeout", "cluster-policy"}, name) ||
		strings.HasPrefix(name, "max-deletes"):
		return GroupSafety
	case slices.Contains([]string{"metrics-address", "pprof", "log-level", "log-format", "version",
		HelpFlag, HelpIgnoredFlag}, name) || strings.HasPrefix(name, "leader-elect"):
		return GroupOperations
	}
	return ""
}

// kind is how the help tells a flag apart.
type kind int

const (
	kindOurs kind = iota
	kindIgnored
	kindTaken   // an ExternalDNS provider flag ExternalDNS' parser reads
	kindRenamed // ExternalDNS' name of one of ours
)

func kindOf(f *flag.Flag) kind {
	switch v := f.Value.(type) {
	case *ignoredValue:
		if v.given == nil && v.flag.Provider {
			return kindTaken
		}
		return kindIgnored
	case *renamedValue:
		return kindRenamed
	}
	return kindOurs
}

// typeName is the word the help shows for a flag's value.
func typeName(v flag.Value) string {
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n := strings.TrimSuffix(t.Name(), "Value"); n {
	case "string", "int", "uint", "duration", "bool":
		return n
	case "int64":
		return "int"
	case "uint64":
		return "uint"
	case "float64":
		return "float"
	case "StringList":
		return "strings"
	}
	return "value"
}

// helpValue is a Go flag's value as pflag prints it.
type helpValue struct {
	flag.Value
	typ string
}

func (v helpValue) Type() string { return v.typ }

// noValue stands for the value of a flag fs does not hold.
type noValue struct{}

func (noValue) String() string   { return "" }
func (noValue) Set(string) error { return nil }

func isBool(v flag.Value) bool {
	b, ok := v.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func pflagOf(f *flag.Flag, usage string) *pflag.Flag {
	pf := &pflag.Flag{Name: f.Name, Usage: usage, Value: helpValue{f.Value, typeName(f.Value)}, DefValue: f.DefValue}
	if isBool(f.Value) {
		pf.NoOptDefVal = "true"
		pf.Value = helpValue{f.Value, "bool"}
	}
	return pf
}

// commandName is how the help and the errors name fs's command.
func commandName(fs *flag.FlagSet) string {
	if n := fs.Name(); n != "zonestream" && n != "" {
		return "zonestream " + n
	}
	return "zonestream"
}

// PrintHelp writes fs's help: the synopsis, the summary, and every flag
// but the ignored ones, grouped by what they do.
func PrintHelp(w io.Writer, fs *flag.FlagSet) {
	info := infoOf(fs)
	usage := info.Usage
	if usage == "" {
		usage = commandName(fs) + " [flags]"
	}
	fmt.Fprintf(w, "Usage: %s\n", usage)
	if info.Summary != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(info.Summary, "\n"))
	}
	taken := map[string]TakenFlag{}
	for _, t := range info.taken {
		taken[t.Name] = t
	}
	groups := map[string]*pflag.FlagSet{}
	add := func(group string, pf *pflag.Flag) {
		g := groups[group]
		if g == nil {
			g = pflag.NewFlagSet(group, pflag.ContinueOnError)
			g.SortFlags = true
			groups[group] = g
		}
		if g.Lookup(pf.Name) == nil {
			g.AddFlag(pf)
		}
	}
	ignored := 0
	fs.VisitAll(func(f *flag.Flag) {
		switch kindOf(f) {
		case kindIgnored:
			ignored++
			return
		case kindRenamed:
			return
		case kindTaken:
			usage := "ExternalDNS' provider flag"
			if t, ok := taken[f.Name]; ok && t.Usage != "" {
				usage = t.Usage
			}
			add(GroupExternal, pflagOf(f, usage))
			return
		}
		group := groupByName(f.Name)
		if group == "" {
			group = info.group[f.Name]
		}
		if group == "" {
			group = GroupOther
		}
		add(group, pflagOf(f, f.Usage))
	})
	for _, t := range info.taken {
		if fs.Lookup(t.Name) != nil || strings.HasPrefix(t.Name, "no-") || t.Name == HelpFlag || t.Name == "version" {
			continue
		}
		pf := &pflag.Flag{Name: t.Name, Usage: t.Usage, Value: helpValue{noValue{}, "string"}}
		if t.Boolean {
			pf.NoOptDefVal = "true"
			pf.Value = helpValue{noValue{}, "bool"}
		}
		add(GroupExternal, pf)
	}
	helpGroup := GroupOperations
	if groups[GroupOperations] == nil {
		helpGroup = GroupOther
	}
	add(helpGroup, &pflag.Flag{Name: HelpFlag, Shorthand: "h", Usage: "print this help and exit", NoOptDefVal: "true",
		Value: helpValue{noValue{}, "bool"}})
	if ignored > 0 {
		add(GroupOperations, &pflag.Flag{Name: HelpIgnoredFlag, NoOptDefVal: "true", Value: helpValue{noValue{}, "bool"},
			Usage: fmt.Sprintf("list the %d flags of ExternalDNS that zonestream takes and ignores, and why", ignored)})
	}
	// A command's flags of no group (a tool's own) come first, under its
	// name.
	for _, name := range append([]string{GroupOther}, groupOrder[:len(groupOrder)-1]...) {
		if g := groups[name]; g != nil {
			title := name
			if name == GroupOther {
				title = "Flags of " + commandName(fs)
			}
			fmt.Fprintf(w, "\n%s:\n%s", title, g.FlagUsagesWrapped(120))
		}
	}
	if ignored > 0 {
		fmt.Fprintf(w, "\n%d flags of ExternalDNS are taken and ignored (a Deployment moved over keeps its command line): %s --%s lists them.\n",
			ignored, commandName(fs), HelpIgnoredFlag)
	}
}

// PrintIgnored writes the ExternalDNS flags fs takes and ignores, by
// reason, and ExternalDNS' names of flags zonestream has under another.
func PrintIgnored(w io.Writer, fs *flag.FlagSet) {
	byReason := map[string][]string{}
	var reasons []string
	var renamed []string
	fs.VisitAll(func(f *flag.Flag) {
		switch kindOf(f) {
		case kindIgnored:
			r := f.Value.(*ignoredValue).flag.Reason
			if _, ok := byReason[r]; !ok {
				reasons = append(reasons, r)
			}
			name := "--" + f.Name
			if !isBool(f.Value) {
				name += " value"
			}
			byReason[r] = append(byReason[r], name)
		case kindRenamed:
			renamed = append(renamed, fmt.Sprintf("  --%s is --%s", f.Name, f.Value.(*renamedValue).ours.Name))
		}
	})
	slices.Sort(reasons)
	n := 0
	for _, r := range reasons {
		n += len(byReason[r])
	}
	fmt.Fprintf(w, "Flags of ExternalDNS that %s takes and ignores (%d), so that a Deployment moved over keeps its command line:\n", commandName(fs), n)
	for _, r := range reasons {
		fmt.Fprintf(w, "\n%s:\n", r)
		for _, name := range byReason[r] {
			fmt.Fprintf(w, "  %s\n", name)
		}
	}
	if len(renamed) > 0 {
		fmt.Fprintf(w, "\nExternalDNS' names of flags zonestream has under another name (they work):\n%s\n", strings.Join(renamed, "\n"))
	}
}

// UsageError is a command line that does not parse: the process exits 2.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Usagef is a UsageError of fs's command.
func Usagef(fs *flag.FlagSet, format string, args ...any) error {
	return &UsageError{msg: commandName(fs) + ": " + fmt.Sprintf(format, args...)}
}

// IsUsageError says whether err is a command line that does not parse.
func IsUsageError(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// helpAsked is the help args ask for: HelpFlag, HelpIgnoredFlag or "".
// Anywhere before "--" counts: `zonestream explain NAME --help` too, and
// before any other parser (ExternalDNS') sees the command line.
func helpAsked(args []string) string {
	for _, a := range args {
		switch a {
		case "--":
			return ""
		case "-h", "-help", "--help", "--h":
			return HelpFlag
		case "-help-ignored", "--help-ignored":
			return HelpIgnoredFlag
		}
	}
	return ""
}

// ParseFlags parses args on fs as fs.Parse does, but: -h/--help prints
// the help on stdout and --help-ignored the ignored flags, and both return
// flag.ErrHelp (the caller exits 0); a flag that does not parse is a
// UsageError of one line, naming the nearest known flag to a misspelled
// one. Nothing is printed but the help.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	switch helpAsked(args) {
	case HelpFlag:
		PrintHelp(os.Stdout, fs)
		return flag.ErrHelp
	case HelpIgnoredFlag:
		PrintIgnored(os.Stdout, fs)
		return flag.ErrHelp
	}
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		return parseError(fs, err)
	}
	return nil
}

// parseError turns what Go's flag package says into one line: --flag as
// the command line of a Kubernetes tool has it, and the nearest flag.
func parseError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag --" + name
		if near := nearestFlag(fs, name); near != "" {
			msg += "; did you mean --" + near + "?"
		}
		return Usagef(fs, "%s (%s --help lists the flags)", msg, commandName(fs))
	}
	msg = strings.Replace(msg, "flag -", "flag --", 1)
	msg = strings.Replace(msg, "argument: -", "argument: --", 1)
	return Usagef(fs, "%s", msg)
}

// nearestFlag is the known flag closest to name by edit distance (a flag
// of which name is a prefix wins), or "" when none is close.
func nearestFlag(fs *flag.FlagSet, name string) string {
	names := []string{HelpFlag, HelpIgnoredFlag}
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	for _, t := range infoOf(fs).taken {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	best, bestD := "", 0
	for _, n := range names {
		d := levenshtein.ComputeDistance(name, n)
		if len(name) >= 3 && strings.HasPrefix(n, name) {
			d = min(d, 1)
		}
		if best == "" || d < bestD {
			best, bestD = n, d
		}
	}
	if bestD > max(3, len(name)/2) {
		return ""
	}
	return best
}

// NewUsageError is a UsageError saying msg, which names the command.
func NewUsageError(msg string) error { return &UsageError{msg: msg} }
