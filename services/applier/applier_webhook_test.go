package applier_test

import (
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/services/applier/provider/webhook"
	"github.com/zonestream/zonestream/testenv/bind"
)

// TestEndToEndWebhook runs the applier with --provider=webhook against
// zonestream's own webhook server, backed by BIND over RFC 2136: plan ->
// POST /records -> BIND -> GET /records -> observed.
func TestEndToEndWebhook(t *testing.T) {
	const prov = webhook.Name
	b := bind.StartT(t, zone)
	js := bus(t)
	rp, err := rfc2136.New(rfcConfig(b, time.Hour).RFC2136, provider.Options{DefaultTTL: 300, Logger: logger()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(webhook.NewServer(rp, webhook.ServerOptions{Logger: logger()}))
	defer srv.Close()

	cfg := applier.Config{Provider: prov, Interval: time.Hour, DefaultTTL: 300}
	cfg.Webhook = webhook.Config{URL: srv.URL, ReadTimeout: 2 * time.Second, WriteTimeout: 5 * time.Second, Retries: 1, RetryBackoff: 10 * time.Millisecond}
	start(t, js, cfg)

	// The first listing: the zone negotiated, its names observed.
	if ns, _ := observedAt(t, js, prov, "ns.example.org"); ns == nil || ns.Zone != zone || ns.Provider != prov {
		t.Fatalf("ns.example.org not observed: %+v", ns)
	}
	zm := lastMsg(t, js, events.StreamObserved, events.ZonesSubject(prov))
	var zl events.ZoneList
	if zm == nil || events.Unmarshal(zm.Header, zm.Data, &zl) != nil || !slices.Equal(zl.Zones, []string{zone}) {
		t.Fatalf("zone list %+v", zl)
	}

	// A plan is applied, BIND answers, the names are observed.
	owner := "heritage=external-dns,external-dns/owner=default,external-dns/resource=service/default/web"
	id := sendPlanTo(t, js, prov, &events.Plan{ID: "w1", Provider: prov, Zone: zone, Changes: []events.Change{
		{New: ep("a-www.example.org", "TXT", owner)},
		{New: ep("www.example.org", "A", "192.0.2.1")},
	}})
	res, _ := waitResultOf(t, js, prov, "w1")
	if res.Status != events.ResultApplied || res.Applied != 2 {
		t.Fatalf("w1: %+v", res)
	}
	if got := providertest.Answers(t, b, "www.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.1"}) {
		t.Fatalf("BIND answers %v", got)
	}
	www, wm := observedAt(t, js, prov, "www.example.org")
	if www == nil || len(www.Records) != 1 || www.Records[0].Targets[0] != "192.0.2.1" || wm.Header.Get(events.HeaderCausation) != id {
		t.Fatalf("observed www after w1: %+v", www)
	}
	if txt, _ := observedAt(t, js, prov, "a-www.example.org"); txt == nil || len(txt.Records) != 1 || txt.Records[0].Targets[0] != owner {
		t.Fatalf("observed ownership TXT: %+v", txt)
	}

	// A plan computed from the old state is stale and changes nothing.
	sendPlanTo(t, js, prov, &events.Plan{ID: "w2", Provider: prov, Zone: zone, Changes: []events.Change{
		{New: ep("www.example.org", "A", "192.0.2.99")},
	}})
	if res, _ := waitResultOf(t, js, prov, "w2"); res.Status != events.ResultStale || res.Applied != 0 {
		t.Fatalf("w2: %+v", res)
	}

	// Update and delete.
	sendPlanTo(t, js, prov, &events.Plan{ID: "w3", Provider: prov, Zone: zone, Changes: []events.Change{
		{Old: ep("www.example.org", "A", "192.0.2.1"), New: ep("www.example.org", "A", "192.0.2.2")},
		{Old: ep("a-www.example.org", "TXT", owner)},
	}})
	if res, _ := waitResultOf(t, js, prov, "w3"); res.Status != events.ResultApplied || res.Applied != 2 {
		t.Fatalf("w3: %+v", res)
	}
	if got := providertest.Answers(t, b, "www.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.2"}) {
		t.Fatalf("after w3 BIND answers %v", got)
	}
	waitFor(t, "tombstone of the TXT", func() bool {
		st, _ := observedAt(t, js, prov, "a-www.example.org")
		return st != nil && len(st.Records) == 0
	})

	// One bad change (BIND refuses it) does not block the others.
	sendPlanTo(t, js, prov, &events.Plan{ID: "w4", Provider: prov, Zone: zone, Changes: []events.Change{
		{New: ep("good.example.org", "A", "192.0.2.7")},
		{New: ep("bad.example.org", "A", "not-an-ip")},
	}})
	res, _ = waitResultOf(t, js, prov, "w4")
	if res.Status != events.ResultPartial || res.Applied != 1 || len(res.Failed) != 1 || res.Failed[0].Change.New.DNSName != "bad.example.org" {
		t.Fatalf("w4: %+v", res)
	}
}

func TestConfigWebhook(t *testing.T) {
	cfg := applier.Config{Provider: webhook.Name, Interval: time.Minute, DefaultTTL: 300}
	cfg.Webhook.URL = "ftp://x"
	if _, err := applier.New(cfg, nil); err == nil {
		t.Fatal("ftp URL accepted")
	}
	cfg.Webhook.URL = ""
	p, err := applier.NewProvider(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.(*webhook.Provider); !ok {
		t.Fatalf("provider %T", p)
	}
}
