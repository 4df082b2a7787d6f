package crd_test

import (
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// A DNSEndpoint entry asks for its PTR records with the record-type
// provider-specific property, as ExternalDNS v0.22 reads it; the property
// is not published.
func TestCRDRulePTR(t *testing.T) {
	e := collectortest.Entry("web.example.org", "A", "192.0.2.7")
	e["providerSpecific"] = []any{map[string]any{"name": "record-type", "value": "ptr"}}
	runCRDRules(t, []crdCase{
		{name: "record-type ptr", cfg: func(c *collector.Config) { c.ManagedRecordTypes = []string{"A", "PTR"} },
			entries: []map[string]any{e},
			want: []events.Endpoint{collectortest.EP("web.example.org", "A", "192.0.2.7"),
				collectortest.EP("7.2.0.192.in-addr.arpa", "PTR", "web.example.org")}},
	})
}
