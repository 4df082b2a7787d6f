package dnsprovider_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/dnsprovider"
	"github.com/zonestream/zonestream/testenv/bind"
)

// deletionPolicy Delete: the object gets the finalizer; deleted, it stays
// while its provider holds a name for us, its applier publishing its scope
// as retiring (the planner plans the deletes) and its status saying it
// waits; once the names are gone (deleted here by hand, as the planner's
// plans would), the finalizer goes, and the object and its zone list with it.
func TestDeletionPolicyDeleteWaitsForTheRecords(t *testing.T) {
	const zone = "a.example.org"
	b := bind.StartT(t, zone)
	w := startWorld(t)
	w.namespace(t, "team-a")
	plant(t, b, zone, "www.a.example.org. 300 IN A 192.0.2.1",
		`a-www.a.example.org. 300 IN TXT "heritage=external-dns,external-dns/owner=default,external-dns/resource=service/team-a/web"`)
	w.secret(t, "team-a", "dns", map[string]string{"rfc2136-tsig-secret": b.Secret})
	w.startController(t, "replica-1")
	spec := rfc2136Spec(b, zone, "dns")
	spec["deletionPolicy"] = "Delete"
	w.provider(t, "team-a", "dns", spec)
	u := w.waitReady(t, "team-a", "dns", "True", "ProviderReady")
	eventually(t, 10*time.Second, func() bool {
		u = w.get(t, "team-a", "dns")
		return slices.Contains(u.GetFinalizers(), dnsprovider.Finalizer) && statusInt(u, "records") == 1
	}, func() string { return "finalizer and records: " + dump(u.Object) })

	w.deleteProvider(t, "team-a", "dns")
	u = w.waitReady(t, "team-a", "dns", "False", "Retiring")
	if _, _, m := ready(u); !strings.Contains(m, "mass-delete guard") {
		t.Fatalf("the status does not say the deletes may wait for approval: %q", m)
	}
	p := events.DeclaredProvider("team-a", "dns")
	var zl *events.ZoneList
	eventually(t, 10*time.Second, func() bool { zl = w.zoneList(t, p); return zl != nil && zl.Scope != nil && zl.Scope.Retiring },
		func() string { return "zone list not retiring: " + dump(zl) })
	time.Sleep(2 * time.Second) // listed twice since: still held, still there
	if w.get(t, "team-a", "dns") == nil {
		t.Fatal("the object went while its provider held a name for us")
	}

	// The planner's deletes, by hand: the name and its ownership record.
	www, _ := dns.NewRR("www.a.example.org. 0 IN A 192.0.2.1")
	txt, _ := dns.NewRR(`a-www.a.example.org. 0 IN TXT "heritage=external-dns,external-dns/owner=default,external-dns/resource=service/team-a/web"`)
	if err := b.Update(zone, nil, []dns.RR{www, txt}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() bool { return w.get(t, "team-a", "dns") == nil },
		func() string { return "object still there: " + dump(w.get(t, "team-a", "dns").Object) })
	eventually(t, 10*time.Second, func() bool { zl = w.zoneList(t, p); return zl != nil && zl.Scope == nil && len(zl.Zones) == 0 },
		func() string { return "zone list not withdrawn: " + dump(zl) })
}
