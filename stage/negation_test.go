package stage

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// ExternalDNS' command lines (kingpin) turn a boolean flag off with
// --no-<flag>; Parse takes it for every boolean flag of the set, and for
// nothing else.
func TestParseNegatesBooleanFlags(t *testing.T) {
	type result struct {
		on, off, own bool
		name         string
		rest         []string
	}
	parse := func(args ...string) (result, error) {
		var r result
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.BoolVar(&r.on, "on", true, "")
		fs.BoolVar(&r.off, "off", false, "")
		fs.BoolVar(&r.own, "no-own", false, "a --no- flag of its own")
		fs.Bool("own", true, "")
		fs.StringVar(&r.name, "name", "", "")
		err := Parse(fs, args)
		r.rest = fs.Args()
		return r, err
	}
	for _, tc := range []struct {
		args []string
		want result
	}{
		{[]string{"--no-on"}, result{on: false}},
		{[]string{"-no-on"}, result{on: false}},
		{[]string{"--off", "--no-off", "--no-on"}, result{}},
		{[]string{"--no-off", "--off"}, result{on: true, off: true}},
		{[]string{"--no-own"}, result{on: true, own: true}},
		// A flag's value is no flag, nor is what follows the flags.
		{[]string{"--name", "--no-on"}, result{on: true, name: "--no-on"}},
		{[]string{"--no-on", "--", "--no-off"}, result{rest: []string{"--no-off"}}},
		{[]string{"--no-on", "arg", "--no-off"}, result{rest: []string{"arg", "--no-off"}}},
	} {
		got, err := parse(tc.args...)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if got.on != tc.want.on || got.off != tc.want.off || got.own != tc.want.own || got.name != tc.want.name ||
			!slices.Equal(got.rest, tc.want.rest) {
			t.Errorf("%q: got %+v, want %+v", tc.args, got, tc.want)
		}
	}
	// Not boolean, not a flag, or given a value: not a negation.
	for _, args := range [][]string{{"--no-name"}, {"--no-such"}, {"--no-on=true"}} {
		if _, err := parse(args...); err == nil {
			t.Errorf("%q parsed", args)
		}
	}
	// A negation is on the command line: $EXTERNAL_DNS_ON does not undo it.
	t.Setenv("EXTERNAL_DNS_ON", "true")
	if got, err := parse("--no-on"); err != nil || got.on {
		t.Errorf("--no-on with $EXTERNAL_DNS_ON=true: on=%v, err %v", got.on, err)
	}
}

// A stage's taker (ExternalDNS' parser) may take --no-<flag> for itself
// alone; a negation of a boolean flag of fs stays for fs as well, in its
// place, and nothing else the taker took does.
func TestTakeLeavesNegationsOfOurFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.Bool("on", true, "")
	fs.Bool("own", false, "")
	fs.Bool("no-own", false, "")
	fs.String("name", "", "")
	theirs := map[string]bool{"no-on": true, "no-own": true, "aws-zone-type": true, "no-aws": true}
	var took []string
	take := func(_ *flag.FlagSet, args []string) (ours []string) {
		for _, a := range args {
			name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if theirs[name] && fs.Lookup(name) == nil {
				took = append(took, a)
				continue
			}
			ours = append(ours, a)
		}
		return ours
	}
	got := Take(fs, []string{"--on", "--no-on", "--aws-zone-type=public", "--no-aws", "--name=x", "--no-own"}, take)
	want := []string{"--on", "--no-on", "--name=x", "--no-own"}
	if !slices.Equal(got, want) {
		t.Errorf("left %q, want %q", got, want)
	}
	if want := []string{"--no-on", "--aws-zone-type=public", "--no-aws"}; !slices.Equal(took, want) {
		t.Errorf("took %q, want %q", took, want)
	}
}
