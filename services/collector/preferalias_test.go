package collector_test

import (
	"fmt"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// --prefer-alias, on a real API server: the collector publishes a CNAME
// with alias=true, leaves a CNAME whose DNSEndpoint entry says
// alias=false alone, and an A record too; without the flag no CNAME gets
// the property.
func TestPreferAliasPublished(t *testing.T) {
	for _, prefer := range []bool{true, false} {
		t.Run(fmt.Sprint("prefer-alias=", prefer), func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			cfg := collectortest.CRDConfig(ns)
			cfg.PreferAlias = prefer
			collectortest.StartCollector(t, cfg)
			dc := collectortest.DynamicClient(t, collectortest.Cluster.Config)
			a, b, c := "a."+ns+".example.org", "b."+ns+".example.org", "c."+ns+".example.org"
			noAlias := collectortest.Entry(b, "CNAME", "lb.example.net")
			noAlias["providerSpecific"] = []any{map[string]any{"name": "alias", "value": "false"}}
			collectortest.CreateDNSEndpoint(t, dc, ns, collectortest.DNSEndpoint("alias",
				collectortest.Entry(a, "CNAME", "lb.example.net"), noAlias, collectortest.Entry(c, "A", "192.0.2.1")))
			st := collectortest.WaitState(t, collectortest.CRDSubject(ns, ns, "alias"), []events.Endpoint{
				collectortest.EP(a, "CNAME", "lb.example.net"), collectortest.EP(b, "CNAME", "lb.example.net"), collectortest.EP(c, "A", "192.0.2.1")})
			got := map[string]string{}
			for _, e := range st.Endpoints {
				got[e.DNSName] = fmt.Sprint(e.ProviderSpecific)
			}
			want := map[string]string{a: "[]", b: "[{alias false}]", c: "[]"}
			if prefer {
				want[a] = "[{alias true}]"
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("provider-specific properties\ngot  %v\nwant %v", got, want)
			}
		})
	}
}
