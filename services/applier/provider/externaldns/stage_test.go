package externaldns_test

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider/externaldns"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
	"github.com/zonestream/zonestream/services/applier/provider/webhook"
)

// The applier with the flags an ExternalDNS user passes builds an
// applier whose provider is ExternalDNS' aws provider: its zones are the
// hosted zones in Route53 (moto). --provider=inmemory stays zonestream's.
func TestApplierStageBuildsTheProviderFromExternalDNSFlags(t *testing.T) {
	startRoute53(t, "example.org")
	a, err := buildApplier([]string{"--provider=aws", "--aws-zone-type=public", "--interval=2m", "--aws-zones-cache-duration=0s"})
	if err != nil {
		t.Fatal(err)
	}
	if zones, err := a.Provider().Zones(context.Background()); err != nil || !slices.Equal(zones, []string{"example.org"}) {
		t.Fatalf("zones %v %v", zones, err)
	}
	if _, ok := a.Provider().(*webhook.Provider); !ok {
		t.Fatalf("aws is served by %T, not ExternalDNS' provider behind the webhook protocol", a.Provider())
	}
	// An ExternalDNS flag with a bad value is refused when the stage is built.
	if _, err := buildApplier([]string{"--provider=aws", "--aws-zone-type=sideways"}); err == nil {
		t.Fatal("--aws-zone-type=sideways accepted")
	}
	// A name zonestream has stays zonestream's own provider.
	a, err = buildApplier([]string{"--provider=inmemory", "--inmemory-zone=example.org"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Provider().(*inmemory.Provider); !ok {
		t.Fatalf("inmemory is served by %T", a.Provider())
	}
}

// buildApplier builds the applier stage from one command line, as a
// process running it alone does.
func buildApplier(args []string) (*applier.Applier, error) {
	def := externaldns.ApplierStage()
	fs := flag.NewFlagSet("applier", flag.ContinueOnError)
	construct := def.Standalone(fs)
	if err := fs.Parse(def.TakeArgs(fs, args)); err != nil {
		return nil, err
	}
	svc, err := construct(slog.Default())
	if err != nil {
		return nil, err
	}
	a, ok := svc.(*applier.Applier)
	if !ok {
		return nil, fmt.Errorf("service %T", svc)
	}
	return a, nil
}
