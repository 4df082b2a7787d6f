package stage

import (
	"bytes"
	"errors"
	"flag"
	"runtime"
	"strings"
	"testing"
	"time"
)

func helpFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("collector", flag.ContinueOnError)
	var o Options
	o.RegisterFlags(fs)
	Grouped(fs, GroupSources, func() {
		fs.String("source", "", "sources")
		fs.String("kubeconfig", "", "kubeconfig")
	})
	AcceptExternalDNSFlags(fs, false)
	return fs
}

// A misspelled flag is one line naming the nearest flag; other parse
// errors are one line with --flag; both are usage errors (exit 2).
func TestParseErrorNamesTheNearestFlag(t *testing.T) {
	for args, want := range map[string]string{
		"--sourc=service":          "zonestream collector: unknown flag --sourc; did you mean --source? (zonestream collector --help lists the flags)",
		"--nats-ulr x":             "zonestream collector: unknown flag --nats-ulr; did you mean --nats-url?",
		"-kubeconfg x":             "did you mean --kubeconfig?",
		"--nats-stream-replicas=x": `zonestream collector: invalid value "x" for flag --nats-stream-replicas`,
		"--zzzzzzzzzzzzzzzzzz":     "unknown flag --zzzzzzzzzzzzzzzzzz (zonestream collector --help",
	} {
		err := Parse(helpFlagSet(), strings.Fields(args))
		if !IsUsageError(err) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", args, err, want)
		}
	}
}

// The help prints --flags by group, not the ignored ones; -h anywhere
// before "--" asks for it, before anything else parses.
func TestHelpGroupsAndHidesIgnored(t *testing.T) {
	var b bytes.Buffer
	fs := helpFlagSet()
	PrintHelp(&b, fs)
	help := b.String()
	for _, want := range []string{"Usage: zonestream collector [flags]", "\nNATS (the bus):\n", "      --nats-url string",
		"\nKubernetes sources (collector):\n", "      --source string", "      --help-ignored", "--help-ignored lists them"} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	if strings.Contains(help, "--min-event-sync-interval") {
		t.Error("help lists an ignored flag")
	}
	b.Reset()
	PrintIgnored(&b, fs)
	if !strings.Contains(b.String(), "--min-event-sync-interval value") {
		t.Errorf("--help-ignored lacks --min-event-sync-interval:\n%s", b.String())
	}
	for args, want := range map[string]string{"--source x -h": HelpFlag, "--help": HelpFlag, "-- --help": "",
		"--bogus --help-ignored": HelpIgnoredFlag, "x": ""} {
		if got := helpAsked(strings.Fields(args)); got != want {
			t.Errorf("helpAsked(%s) = %q, want %q", args, got, want)
		}
	}
	if err := Parse(helpFlagSet(), []string{"--bogus", "--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--bogus --help: %v, want the help", err)
	}
}

// The help of a flag set goes with it: tests and benchmarks build many
// all-in-ones.
func TestHelpOfAFlagSetGoesWithIt(t *testing.T) {
	count := func() int {
		helpsMu.Lock()
		defer helpsMu.Unlock()
		return len(helps)
	}
	before := count()
	for range 100 {
		Describe(flag.NewFlagSet("x", flag.ContinueOnError), Help{Usage: "x"})
	}
	for i := 0; i < 100 && count() > before; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := count(); n > before {
		t.Errorf("%d helps of flag sets gone are kept", n-before)
	}
}
