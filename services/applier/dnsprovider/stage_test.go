package dnsprovider_test

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/leader"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/dnsprovider"
	"github.com/zonestream/zonestream/stage"
)

// The applier stage with --dnsproviders, as `zonestream applier` builds
// it: --provider's applier and the declared ones side by side, each
// under its own lease; with --provider empty only the declared ones;
// without --dnsproviders an empty --provider is refused as before.
func TestApplierStageWithDNSProviders(t *testing.T) {
	w := startWorld(t)
	w.namespace(t, "team-a")
	logger := slog.New(slog.NewTextHandler(w.logs, nil))
	build := func(args ...string) (stage.Runner, error) {
		fs := flag.NewFlagSet("applier", flag.ContinueOnError)
		construct := dnsprovider.Stage(applier.Stage(), nil).Standalone(fs)
		if err := stage.Parse(fs, args); err != nil {
			t.Fatal(err)
		}
		return construct(logger)
	}
	if _, err := build("--kubeconfig=" + w.cluster.Kubeconfig); err == nil || !strings.Contains(err.Error(), "--provider is required") {
		t.Fatalf("no --provider, no --dnsproviders: %v", err)
	}
	if _, err := build("--dnsproviders", "--kubeconfig="+w.cluster.Kubeconfig); err != nil {
		t.Fatalf("--dnsproviders without --provider: %v", err)
	}
	svc, err := build("--dnsproviders", "--kubeconfig="+w.cluster.Kubeconfig, "--provider=inmemory",
		"--inmemory-zone=flags.example.org", "--interval=1s", "--txt-owner-id=stage-test")
	if err != nil {
		t.Fatal(err)
	}
	el := stage.Election{Enabled: true, Config: leader.Config{Identity: "replica-1", LeaseDuration: 3 * time.Second,
		RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond}}
	if svc, err = el.Elected(svc, logger); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx, w.js) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Error(err)
		}
	})

	w.provider(t, "team-a", "decl", inmemorySpec("decl.example.org"))
	var flagged, declared *events.ZoneList
	eventually(t, 60*time.Second, func() bool {
		flagged, declared = w.zoneList(t, "inmemory"), w.zoneList(t, events.DeclaredProvider("team-a", "decl"))
		return flagged != nil && declared != nil && len(declared.Zones) == 1
	}, func() string { return "zone lists: " + dump(flagged) + " " + dump(declared) })
	if !slices.Equal(flagged.Zones, []string{"flags.example.org"}) || flagged.Scope != nil {
		t.Fatalf("the applier of --provider: %s", dump(flagged))
	}
	if !slices.Equal(declared.Zones, []string{"decl.example.org"}) || declared.Scope == nil {
		t.Fatalf("the declared provider: %s", dump(declared))
	}
	w.waitReady(t, "team-a", "decl", "True", "ProviderReady")
	for _, lease := range []string{"applier.inmemory", "applier.team-a=2Fdecl"} {
		if !strings.Contains(w.logs.String(), `lease=`+lease) && !strings.Contains(w.logs.String(), `lease="`+lease+`"`) {
			t.Errorf("no lease %s taken:\n%s", lease, w.logs.String())
		}
	}
	eventually(t, 10*time.Second, func() bool { return svc.Ready() == nil }, func() string { return svc.Ready().Error() })
}
