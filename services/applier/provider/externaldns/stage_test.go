package externaldns_test

import (
	"context"
	"flag"
	"log/slog"
	"slices"
	"testing"

	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider/externaldns"
)

// `zonestream-externaldns applier` with the flags an ExternalDNS user
// passes builds an applier whose provider is ExternalDNS' aws provider:
// its zones are the hosted zones in Route53 (moto).
func TestApplierStageBuildsTheProviderFromExternalDNSFlags(t *testing.T) {
	startRoute53(t, "example.org")
	ours, theirs := externaldns.SplitArgs([]string{"--provider=aws", "--aws-zone-type=public", "--interval=2m",
		"--aws-zones-cache-duration=0s"})
	def := externaldns.ApplierStage(theirs)
	fs := flag.NewFlagSet("applier", flag.ContinueOnError)
	construct := def.Standalone(fs)
	if err := fs.Parse(ours); err != nil {
		t.Fatal(err)
	}
	svc, err := construct(slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	a, ok := svc.(*applier.Applier)
	if !ok {
		t.Fatalf("service %T", svc)
	}
	if zones, err := a.Provider().Zones(context.Background()); err != nil || !slices.Equal(zones, []string{"example.org"}) {
		t.Fatalf("zones %v %v", zones, err)
	}
	// An ExternalDNS flag with a bad value is refused when the stage is built.
	_, theirs = externaldns.SplitArgs([]string{"--provider=aws", "--aws-zone-type=sideways"})
	fs = flag.NewFlagSet("applier", flag.ContinueOnError)
	construct = externaldns.ApplierStage(theirs).Standalone(fs)
	if err := fs.Parse([]string{"--provider=aws"}); err != nil {
		t.Fatal(err)
	}
	if _, err := construct(slog.Default()); err == nil {
		t.Fatal("--aws-zone-type=sideways accepted")
	}
}
