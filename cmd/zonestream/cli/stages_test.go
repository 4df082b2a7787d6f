package cli

import (
	"flag"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/stage"
)

// A stage takes the same flags, with the same help and defaults, whether it
// runs alone or in the all-in-one: each flag is defined once (registering
// one twice on the all-in-one's FlagSet would panic here).
func TestEveryStageTakesTheSameFlagsAloneAndInTheAllInOne(t *testing.T) {
	all := NewAllInOne().fs
	for _, def := range stages {
		d := def()
		alone := flag.NewFlagSet(d.Name, flag.ContinueOnError)
		alone.SetOutput(io.Discard)
		var opts stage.Options
		opts.RegisterFlags(alone)
		opts.Election.RegisterFlags(alone)
		d.Standalone(alone)
		n := 0
		alone.VisitAll(func(f *flag.Flag) {
			n++
			g := all.Lookup(f.Name)
			switch {
			case g == nil:
				t.Errorf("%s takes --%s alone, the all-in-one does not", d.Name, f.Name)
			case g.Usage != f.Usage || g.DefValue != f.DefValue:
				t.Errorf("--%s: %s alone says %q (default %q), the all-in-one %q (default %q)",
					f.Name, d.Name, f.Usage, f.DefValue, g.Usage, g.DefValue)
			}
		})
		if n < 10 {
			t.Errorf("%s registers only %d flags alone", d.Name, n)
		}
	}
	for _, name := range []string{"managed-record-types", "heartbeat-interval", "txt-owner-id", "domain-filter"} {
		if all.Lookup(name) == nil {
			t.Errorf("the all-in-one has no --%s", name)
		}
	}
}

// The binary users run does not link the test harness (the demo's local
// kube-apiserver and BIND); `-tags demo` does, which shows the check sees it.
func TestReleaseBinaryLinksNoHarness(t *testing.T) {
	deps := func(args ...string) []string {
		out, err := exec.Command("go", append(append([]string{"list", "-deps"}, args...), "github.com/zonestream/zonestream/cmd/zonestream")...).Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		var harness []string
		for _, p := range strings.Fields(string(out)) {
			if strings.Contains(p, "zonestream/testenv") {
				harness = append(harness, p)
			}
		}
		return harness
	}
	if h := deps(); len(h) > 0 {
		t.Errorf("zonestream links the harness: %v", h)
	}
	if h := deps("-tags", "demo"); len(h) == 0 {
		t.Error("with -tags demo, zonestream links no harness package: the check cannot see one")
	}
}

// `zonestream --dnsproviders` builds its applier with no --provider (only
// declared providers); without --dnsproviders an empty --provider is
// refused as before.
func TestAllInOneRunsDeclaredProvidersWithoutProvider(t *testing.T) {
	kubeconfig := t.TempDir() + "/kubeconfig"
	const kc = "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	if err := os.WriteFile(kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	build := func(args ...string) error {
		a := NewAllInOne()
		a.WithoutStages("collector", "portal")
		if _, err := a.Parse(args); err != nil {
			t.Fatal(err)
		}
		_, err := a.newStages(true, slog.New(slog.DiscardHandler))
		return err
	}
	if err := build("--kubeconfig=" + kubeconfig); err == nil || !strings.Contains(err.Error(), "--provider is required") {
		t.Fatalf("no --provider, no --dnsproviders: %v", err)
	}
	if err := build("--dnsproviders", "--kubeconfig="+kubeconfig); err != nil {
		t.Fatalf("--dnsproviders without --provider: %v", err)
	}
	if err := build("--dnsproviders", "--kubeconfig="+kubeconfig, "--provider=inmemory", "--inmemory-zone=example.org"); err != nil {
		t.Fatalf("--dnsproviders with --provider: %v", err)
	}
}
