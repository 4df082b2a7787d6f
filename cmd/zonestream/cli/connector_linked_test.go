//go:build externaldns

package cli

import (
	"bytes"
	"encoding/gob"
	"testing"

	"sigs.k8s.io/external-dns/endpoint"

	connectorsource "github.com/zonestream/zonestream/services/collector/source/connector"
)

// TestLinkedConnectorWire: what a connector server built on the linked
// ExternalDNS' own endpoint package gob-encodes, the connector source
// reads, field by field (its tests' servers use a copy of the types).
func TestLinkedConnectorWire(t *testing.T) {
	sent := []*endpoint.Endpoint{
		endpoint.NewEndpointWithTTL("a.example.org", endpoint.RecordTypeA, 180, "192.0.2.1", "192.0.2.2").
			WithSetIdentifier("eu").WithProviderSpecific("aws/weight", "10").WithLabel("owner", "someone"),
		endpoint.NewEndpoint("b.example.org", endpoint.RecordTypeCNAME, "a.example.org"),
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(sent); err != nil {
		t.Fatal(err)
	}
	got, err := connectorsource.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(sent) {
		t.Fatalf("decoded %d endpoints, want %d", len(got), len(sent))
	}
	for i, e := range sent {
		g := got[i]
		if g.DNSName != e.DNSName || g.RecordType != e.RecordType || g.RecordTTL != int64(e.RecordTTL) ||
			g.SetIdentifier != e.SetIdentifier || len(g.Targets) != len(e.Targets) || len(g.ProviderSpecific) != len(e.ProviderSpecific) {
			t.Fatalf("endpoint %d: decoded %+v, sent %+v", i, g, e)
		}
		for j := range e.Targets {
			if g.Targets[j] != e.Targets[j] {
				t.Errorf("endpoint %d target %d: %q, sent %q", i, j, g.Targets[j], e.Targets[j])
			}
		}
		for j, p := range e.ProviderSpecific {
			if g.ProviderSpecific[j].Name != p.Name || g.ProviderSpecific[j].Value != p.Value {
				t.Errorf("endpoint %d property %d: %+v, sent %+v", i, j, g.ProviderSpecific[j], p)
			}
		}
	}
}
