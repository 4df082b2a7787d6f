package stage

import (
	"flag"
	"log/slog"
	"strings"
)

// Definition is how a stage is wired into a process, written once in the
// stage's own package and used both by the all-in-one and by a process
// that runs the stage alone.
type Definition struct {
	// Name is the stage's command and its services' log attribute.
	Name string
	// Shared are the groups of shared flags the stage reads.
	Shared SharedGroups
	// RegisterFlags defines the stage's own flags.
	RegisterFlags func(fs *flag.FlagSet)
	// New builds the stage once the flags are parsed.
	New func(shared *Shared, logger *slog.Logger) (Runner, error)
	// TakeArgs, when set, takes from the command line what another
	// parser of the stage reads (ExternalDNS' provider flags), before
	// fs, which holds every flag of the process, parses the rest it
	// returns.
	TakeArgs func(fs *flag.FlagSet, args []string) []string
	// Taken, when set, are the flags TakeArgs' parser reads, for the help
	// and the nearest flag to a misspelled one.
	Taken func() []TakenFlag
}

// Standalone registers on fs what a process running this stage alone
// takes beyond the process' own flags: the shared flags the stage reads and
// its own. The constructor it returns is to be called once fs is parsed.
func (d Definition) Standalone(fs *flag.FlagSet) func(*slog.Logger) (Runner, error) {
	shared := new(Shared)
	Grouped(fs, StageGroup(d.Name), func() {
		shared.RegisterFlags(fs, d.Shared)
		d.RegisterFlags(fs)
	})
	if d.Taken != nil {
		Took(fs, d.Taken())
	}
	return func(logger *slog.Logger) (Runner, error) { return d.New(shared, logger) }
}

// Take runs take (a Definition's TakeArgs) on args and returns what it
// leaves to fs. A taker hands --no-<flag> to the other parser alone when
// that parser knows it by that name and fs only as <flag>: such a
// negation of a boolean flag of fs stays for fs too, where Parse reads it.
//
// A command line that asks for help (-h, --help, --help-ignored) is left
// whole to fs: the help is fs's, whatever other parser the stage has.
func Take(fs *flag.FlagSet, args []string, take func(*flag.FlagSet, []string) []string) []string {
	if helpAsked(args) != "" {
		return args
	}
	left := take(fs, args)
	// left is args less what take took, in order.
	out := make([]string, 0, len(args))
	j := 0
	for _, a := range args {
		if j < len(left) && left[j] == a {
			out = append(out, a)
			j++
			continue
		}
		name, ok := strings.CutPrefix(strings.TrimLeft(a, "-"), "no-")
		if f := fs.Lookup(name); ok && strings.HasPrefix(a, "-") && f != nil && isBoolFlag(f) && fs.Lookup("no-"+name) == nil {
			out = append(out, a)
		}
	}
	return append(out, left[j:]...)
}
