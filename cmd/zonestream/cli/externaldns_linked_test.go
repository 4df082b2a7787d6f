//go:build externaldns

package cli

import (
	"maps"
	"slices"
	"testing"

	"github.com/zonestream/zonestream/services/applier/provider/externaldns"
	"github.com/zonestream/zonestream/services/collector"
)

// sourcesNotYet are the --source values of the linked ExternalDNS that the
// collector does not have yet, each with why. A source ExternalDNS adds is
// in neither: the test below fails until it is one or the other.
var sourcesNotYet = map[string]string{
	"fake": "not planned: random endpoints for ExternalDNS' own tests; zonestream's tests use real objects (docs/sources/README.md)",
}

// TestLinkedExternalDNSFlagsAreListed reads the flags of the ExternalDNS
// the build links from its own command line and compares them with the
// list TestEveryExternalDNSFlagParses checks one by one: a flag a newer
// ExternalDNS adds fails here until it is listed (and so implemented or
// ignored with a reason); a listed flag it dropped fails too.
func TestLinkedExternalDNSFlagsAreListed(t *testing.T) {
	linked := externaldns.Linked()
	if linked.Version != "v0.23.0" {
		t.Errorf("linked ExternalDNS %s: the flag list is v0.23.0's; regenerate testdata and rename it", linked.Version)
	}
	listed := map[string]externalDNSFlag{}
	for _, f := range readExternalDNSFlags(t) {
		listed[f.name] = f
	}
	seen := map[string]bool{}
	for _, f := range linked.Flags {
		seen[f.Name] = true
		l, ok := listed[f.Name]
		switch {
		case !ok:
			t.Errorf("ExternalDNS %s has --%s, which the flag list lacks: implement it or ignore it with why, and list it", linked.Version, f.Name)
		case l.boolean() != f.Boolean:
			t.Errorf("--%s: boolean %v in the list, %v in ExternalDNS %s", f.Name, l.boolean(), f.Boolean, linked.Version)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(listed)) {
		if !seen[name] {
			t.Errorf("--%s is listed, but ExternalDNS %s has no such flag", name, linked.Version)
		}
	}
	if len(linked.Flags) < 170 {
		t.Fatalf("read only %d flags from ExternalDNS %s", len(linked.Flags), linked.Version)
	}
}

// TestLinkedExternalDNSSourcesAreHandled: every --source of the linked
// ExternalDNS is a source of the collector or not yet, with why; every
// --provider is offered, natively or through ExternalDNS' code, or refused
// at start with why.
func TestLinkedExternalDNSSourcesAreHandled(t *testing.T) {
	linked := externaldns.Linked()
	known := collector.KnownSources()
	for _, s := range linked.Sources {
		_, notYet := sourcesNotYet[s]
		switch {
		case slices.Contains(known, s) && notYet:
			t.Errorf("--source=%s is a collector source and listed as not yet", s)
		case !slices.Contains(known, s) && !notYet:
			t.Errorf("ExternalDNS %s has --source=%s, which zonestream neither has nor lists as not yet", linked.Version, s)
		}
	}
	for s := range sourcesNotYet {
		if !slices.Contains(linked.Sources, s) {
			t.Errorf("%s is listed as not yet, but ExternalDNS %s has no such source", s, linked.Version)
		}
	}
	for _, p := range linked.Providers {
		if !slices.Contains(externaldns.Providers, p) && !externaldns.Refused(p) {
			t.Errorf("ExternalDNS %s has --provider=%s, which zonestream neither offers nor refuses with why", linked.Version, p)
		}
	}
}
