package dnsprovider_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/testenv/bind"
)

// A DNSProvider of BIND (rfc2136, TSIG secret in a Secret) gets its own
// applier: its zone list with its scope on the bus, Ready with its zones
// and the names it holds for us. A wrong secret makes it ListingFailed
// (the other namespace's provider stays Ready), the right one again makes
// it Ready without the process restarting, and deleting it (Retain) stops
// it and withdraws its zone list while BIND keeps its records. No secret
// shows in a log line, the status or the bus.
func TestDeclaredRFC2136Provider(t *testing.T) {
	const zoneA, zoneB = "a.example.org", "b.example.org"
	b := bind.StartT(t, zoneA, zoneB)
	w := startWorld(t)
	w.namespace(t, "team-a")
	w.namespace(t, "team-b")
	plant(t, b, zoneA, "www.a.example.org. 300 IN A 192.0.2.1",
		`a-www.a.example.org. 300 IN TXT "heritage=external-dns,external-dns/owner=default,external-dns/resource=service/team-a/web"`,
		`a-old.a.example.org. 300 IN TXT "heritage=external-dns,external-dns/owner=someone-else,external-dns/resource=service/x/y"`,
		"old.a.example.org. 300 IN A 192.0.2.9")
	w.secret(t, "team-a", "dns", map[string]string{"rfc2136-tsig-secret": b.Secret})
	w.secret(t, "team-b", "dns", map[string]string{"rfc2136-tsig-secret": b.Secret})
	w.startController(t, "replica-1")

	created := time.Now()
	w.provider(t, "team-a", "dns", rfc2136Spec(b, zoneA, "dns"))
	a := events.DeclaredProvider("team-a", "dns")
	var zl *events.ZoneList
	eventually(t, 60*time.Second, func() bool {
		zl = w.zoneList(t, a)
		return zl != nil && zl.Scope != nil && slices.Equal(zl.Zones, []string{zoneA})
	}, func() string { return "zone list " + dump(zl) })
	onBus := time.Since(created)
	if zl.Scope.Declared != a || !slices.Equal(zl.Scope.Domains, []string{zoneA}) || !slices.Equal(zl.Scope.Namespaces, []string{"team-a"}) || zl.Scope.Problem != "" {
		t.Fatalf("scope %+v", zl.Scope)
	}
	u := w.waitReady(t, "team-a", "dns", "True", "ProviderReady")
	isReady := time.Since(created)
	t.Logf("DNSProvider created -> zone list with its zone on the bus: %s; -> Ready True: %s", onBus, isReady)
	zones, _, _ := unstructuredStrings(u, "status", "zones")
	if !slices.Equal(zones, []string{zoneA}) {
		t.Fatalf("status.zones %v", zones)
	}
	// www is ours (our TXT), old is someone else's: one name held.
	eventually(t, 10*time.Second, func() bool { return statusInt(w.get(t, "team-a", "dns"), "records") == 1 },
		func() string { return "status.records " + dump(w.get(t, "team-a", "dns").Object["status"]) })

	// A plan published by hand to the declared provider is applied to BIND.
	ownership := "heritage=external-dns,external-dns/owner=default,external-dns/resource=service/team-a/new"
	newA, newTXT := events.NewEndpoint("new.a.example.org", "A", 0, "192.0.2.7"), events.NewEndpoint("a-new.a.example.org", "TXT", 0, ownership)
	msg, err := events.Message(events.PlanSubject(a, zoneA), &events.Plan{ID: "p1", Provider: a, Zone: zoneA,
		Changes: []events.Change{{New: &newTXT}, {New: &newA}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.js.PublishMsg(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() bool {
		rrs, err := b.Query("new.a.example.org", dns.TypeA)
		return err == nil && len(rrs) == 1
	}, func() string { return "the plan was not applied to BIND" })
	eventually(t, 10*time.Second, func() bool { return statusInt(w.get(t, "team-a", "dns"), "records") == 2 },
		func() string { return "status.records " + dump(w.get(t, "team-a", "dns").Object["status"]) })

	createdB := time.Now()
	w.provider(t, "team-b", "dns", rfc2136Spec(b, zoneB, "dns"))
	w.waitReady(t, "team-b", "dns", "True", "ProviderReady")
	t.Logf("a second DNSProvider created -> Ready True: %s", time.Since(createdB))

	// A wrong TSIG secret: the listing fails, the zones listed before stay.
	const wrong = "d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldC13cm9uZw=="
	restarts := func() float64 {
		return max(0, metric(t, "zonestream_dnsprovider_restarts_total", map[string]string{"provider": a, "reason": "secret"}))
	}
	restartsBefore := restarts()
	w.secret(t, "team-a", "dns", map[string]string{"rfc2136-tsig-secret": wrong})
	u = w.waitReady(t, "team-a", "dns", "False", "ListingFailed")
	lastError, _, _ := unstructuredString(u, "status", "lastError")
	if lastError == "" {
		t.Fatalf("no lastError: %s", dump(u.Object["status"]))
	}
	eventually(t, 10*time.Second, func() bool {
		zl = w.zoneList(t, a)
		return zl.Scope != nil && zl.Scope.Problem != ""
	}, func() string { return "zone list " + dump(zl) })
	if !slices.Equal(zl.Zones, []string{zoneA}) {
		t.Fatalf("zone list after a failed listing lost its zones: %s", dump(zl))
	}
	if s, r, m := ready(w.get(t, "team-b", "dns")); s != "True" {
		t.Fatalf("team-b's provider: %s %s %s", s, r, m)
	}
	noSecret(t, "status of team-a/dns", dump(u.Object), b.Secret, wrong)
	noSecret(t, "zone list", dump(zl), b.Secret, wrong)

	// The right secret again: Ready, the process untouched (rotation).
	w.secret(t, "team-a", "dns", map[string]string{"rfc2136-tsig-secret": b.Secret})
	w.waitReady(t, "team-a", "dns", "True", "ProviderReady")
	if !strings.Contains(w.logs.String(), "reason=secret") {
		t.Fatal("the rotation was not logged as a restart for the Secret")
	}
	if n := restarts() - restartsBefore; n != 2 {
		t.Fatalf("zonestream_dnsprovider_restarts_total{reason=secret} went up by %v in two rotations", n)
	}

	// Deleted (Retain): gone at once, zone list withdrawn, records stay.
	w.deleteProvider(t, "team-a", "dns")
	eventually(t, 30*time.Second, func() bool { return w.get(t, "team-a", "dns") == nil }, func() string { return "team-a/dns still there" })
	eventually(t, 30*time.Second, func() bool {
		zl = w.zoneList(t, a)
		return zl != nil && len(zl.Zones) == 0 && zl.Scope == nil
	}, func() string { return "zone list not withdrawn: " + dump(zl) })
	if v := metric(t, "zonestream_applier_ready", map[string]string{"provider": a}); v != -1 {
		t.Fatalf("zonestream_applier_ready of a provider that went: %v", v)
	}
	if v := metric(t, "zonestream_applier_ready", map[string]string{"provider": events.DeclaredProvider("team-b", "dns")}); v != 1 {
		t.Fatalf("zonestream_applier_ready of team-b's provider: %v", v)
	}
	if got := providertest.Answers(t, b, "www.a.example.org", dns.TypeA); !slices.Equal(got, []string{"192.0.2.1"}) {
		t.Fatalf("BIND answers %v after the DNSProvider went (Retain)", got)
	}
	if s, _, m := ready(w.get(t, "team-b", "dns")); s != "True" {
		t.Fatalf("team-b's provider after team-a's went: %s %s", s, m)
	}
	noSecret(t, "the controller's log", w.logs.String(), b.Secret, wrong)
}

func noSecret(t *testing.T, where, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Fatalf("%s holds a secret", where)
		}
	}
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
