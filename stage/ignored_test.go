package stage

import (
	"bytes"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func ignoredFlagSet(t *testing.T, providersTaken bool) (*flag.FlagSet, *IgnoredFlags, *bool) {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	axfr := fs.Bool("rfc2136-tsig-axfr", false, "")
	fs.String("interval", "1m", "")
	return fs, AcceptExternalDNSFlags(fs, providersTaken), axfr
}

// An ignored flag is taken in every syntax of ExternalDNS' command line,
// and logged once, with why, however often it was given; its value is not
// logged (it may be a secret).
func TestIgnoredFlagsAreLoggedOnce(t *testing.T) {
	fs, ig, _ := ignoredFlagSet(t, false)
	t.Setenv("EXTERNAL_DNS_PIHOLE_PASSWORD", "hunter2")
	err := Parse(fs, []string{"--events", "--min-event-sync-interval", "5s", "--no-events",
		"--events=true", "--aws-zone-tags=a=b", "--aws-zone-tags", "c=d", "--interval=2m"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	ig.Log(slog.New(slog.NewTextHandler(&buf, nil)))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{"--events", "--min-event-sync-interval", "--aws-zone-tags", "--pihole-password"}
	if len(lines) != len(want) {
		t.Fatalf("logged %d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, l := range lines {
		if !strings.Contains(l, `msg="ignored flag"`) || !strings.Contains(l, "flag="+want[i]+" ") || !strings.Contains(l, "reason=") {
			t.Errorf("line %d: %s, want --%s and a reason", i, l, want[i])
		}
	}
	if strings.Contains(buf.String(), "hunter2") || strings.Contains(buf.String(), "c=d") {
		t.Errorf("a value was logged:\n%s", buf.String())
	}
}

// Where a stage hands the providers' flags to ExternalDNS' parser, they are
// that parser's: taken here without a word.
func TestProvidersFlagsTakenAreNotIgnored(t *testing.T) {
	fs, ig, _ := ignoredFlagSet(t, true)
	if err := Parse(fs, []string{"--aws-zone-type=public", "--no-aws-evaluate-target-health", "--events"}); err != nil {
		t.Fatal(err)
	}
	if g := ig.Given(); len(g) != 1 || g[0].Name != "events" {
		t.Errorf("given %+v, want only --events", g)
	}
}

// A flag zonestream has under another name than ExternalDNS v0.22 sets
// zonestream's; a flag the set defines is never replaced by an ignored one.
func TestRenamedFlags(t *testing.T) {
	for _, args := range [][]string{{"--rfc2136-axfr"}, {"--rfc2136-axfr=true"}, {"--rfc2136-tsig-axfr"}} {
		fs, ig, axfr := ignoredFlagSet(t, false)
		if err := Parse(fs, args); err != nil || !*axfr || len(ig.Given()) > 0 {
			t.Errorf("%q: axfr %v, ignored %v, err %v", args, *axfr, ig.Given(), err)
		}
	}
	fs, _, axfr := ignoredFlagSet(t, false)
	t.Setenv("EXTERNAL_DNS_RFC2136_TSIG_AXFR", "true")
	if err := Parse(fs, []string{"--no-rfc2136-axfr"}); err != nil || *axfr {
		t.Errorf("--no-rfc2136-axfr: axfr %v, err %v", *axfr, err)
	}
	if f := fs.Lookup("interval"); f.Usage != "" {
		t.Errorf("--interval, a flag of the set, was replaced: %q", f.Usage)
	}
	// --server is --master's other name: without --master, nothing.
	if fs.Lookup("server") != nil {
		t.Error("--server registered without --master")
	}
}
