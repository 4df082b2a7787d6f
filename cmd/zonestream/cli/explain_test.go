package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

func TestExplain(t *testing.T) {
	s := natsenv.StartT(t)
	_, js := natsenv.Connect(t, s.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := events.EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	const name = "www.example.org"
	web := events.ObjectRef{Cluster: "eu", Source: "ingress", Namespace: "shop", Name: "web"}
	old := events.ObjectRef{Cluster: "eu", Source: "service", Namespace: "shop", Name: "legacy"}
	us := events.ObjectRef{Cluster: "us", Source: "ingress", Namespace: "shop", Name: "web"}
	a := events.NewEndpoint(name, "A", 60, "192.0.2.7")
	publish := func(subject string, ev events.Event) {
		t.Helper()
		if _, _, err := events.Publish(ctx, js, subject, ev, ""); err != nil {
			t.Fatal(err)
		}
	}
	publish(web.Subject(), &events.SourceState{Object: web, Endpoints: []events.Endpoint{a}})
	publish(old.Subject(), &events.SourceState{Object: old, Endpoints: []events.Endpoint{events.NewEndpoint(name, "A", 0, "192.0.2.99")}})
	publish(events.DesiredSubject(name), &events.DesiredState{DNSName: name, Endpoints: []events.Endpoint{a},
		Contributors: []events.ObjectRef{web}, Losers: []events.Loser{{Object: old, Reason: `source "ingress" outranks "service"`}},
		Holders: []events.RRsetHolder{{RecordType: "A", Objects: []events.ObjectRef{web}},
			{RecordType: "A", SetIdentifier: "blue", Objects: []events.ObjectRef{web, us}}}})
	publish(events.ZonesSubject("rfc2136"), &events.ZoneList{Provider: "rfc2136", Zones: []string{"example.org"}})
	publish(events.ObservedSubject("rfc2136", name), &events.ObservedState{Provider: "rfc2136", Zone: "example.org",
		DNSName: name, Records: []events.Endpoint{events.NewEndpoint(name, "A", 60, "192.0.2.7")}})
	publish(events.ObservedSubject("rfc2136", "a-"+name), &events.ObservedState{Provider: "rfc2136", Zone: "example.org",
		DNSName: "a-" + name, Records: []events.Endpoint{events.NewEndpoint("a-"+name, "TXT", 60, "heritage=external-dns,external-dns/owner=eu")}})

	ex, err := ExplainName(ctx, js, "WWW.example.org.")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Desired == nil || len(ex.Sources) != 2 || len(ex.Observed) != 2 {
		t.Fatalf("explanation incomplete: desired %v, %d sources, %d observed", ex.Desired != nil, len(ex.Sources), len(ex.Observed))
	}
	var out bytes.Buffer
	ex.print(&out)
	for _, want := range []string{
		"wanted by: ingress/shop/web in cluster eu",
		`outranked: service/shop/legacy in cluster eu: source "ingress" outranks "service"`,
		"owned by: A www.example.org ← eu/ingress/shop/web\n",
		"owned by: A www.example.org [blue] ← eu/ingress/shop/web, us/ingress/shop/web\n",
		"goes to: routed to rfc2136 (flags): its zone example.org holds it\n",
		"held by rfc2136 in zone example.org",
		"a-www.example.org TXT    heritage=external-dns,external-dns/owner=eu",
		"history (newest first):",
		"source #1      eu/ingress/shop/web wants A 192.0.2.7",
		"desired #1     wanted: A 192.0.2.7 by eu/ingress/shop/web; outranked: eu/service/shop/legacy",
		"observed #3    rfc2136 holds at a-www.example.org: TXT",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explain output lacks %q:\n%s", want, out.String())
		}
	}

	none, err := ExplainName(ctx, js, "nothing.example.org")
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	none.print(&out)
	if !strings.Contains(out.String(), "nothing on the bus has ever wanted it") {
		t.Errorf("unknown name explained as:\n%s", out.String())
	}
}

// TestExplainRoutes: explain says which provider a name goes to and why,
// by the zone lists on the bus, as events/routing decides: the object
// that declares it, the zone or domain that makes it the most specific,
// the namespaces it serves; or the refusal with its detail.
func TestExplainRoutes(t *testing.T) {
	s := natsenv.StartT(t)
	_, js := natsenv.Connect(t, s.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := events.EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	publish := func(subject string, ev events.Event) {
		t.Helper()
		if _, _, err := events.Publish(ctx, js, subject, ev, ""); err != nil {
			t.Fatal(err)
		}
	}
	teamA, fresh := events.DeclaredProvider("team-a", "dns"), events.DeclaredProvider("", "fresh")
	publish(events.ZonesSubject("public"), &events.ZoneList{Provider: "public", Zones: []string{"example.com"}})
	publish(events.ZonesSubject(teamA), &events.ZoneList{Provider: teamA, Zones: []string{"a.example.com"},
		Scope: &events.ProviderScope{Declared: teamA, Namespaces: []string{"team-a"}}})
	publish(events.ZonesSubject(fresh), &events.ZoneList{Provider: fresh, Scope: &events.ProviderScope{Declared: fresh,
		Domains: []string{"new.example.com"}, Namespaces: []string{events.AllNamespaces}, Problem: "REFUSED"}})
	want := func(name, namespace string, held bool) {
		t.Helper()
		obj := events.ObjectRef{Cluster: "eu", Source: "service", Namespace: namespace, Name: "web"}
		a := events.NewEndpoint(name, "A", 60, "192.0.2.7")
		publish(events.DesiredSubject(name), &events.DesiredState{DNSName: name, Endpoints: []events.Endpoint{a},
			Contributors: []events.ObjectRef{obj}, Holders: []events.RRsetHolder{{RecordType: "A", Objects: []events.ObjectRef{obj}}}})
		if held {
			publish(events.ObservedSubject("public", name), &events.ObservedState{Provider: "public", Zone: "example.com",
				DNSName: name, Records: []events.Endpoint{a}})
		}
	}
	want("www.a.example.com", "team-a", true)
	want("shop.a.example.com", "shop", false)
	want("x.new.example.com", "team-b", false)
	cases := []struct {
		name   string
		reason string
		lines  []string
	}{
		{"www.a.example.com", "", []string{
			"goes to: routed to DNSProvider team-a/dns: the most specific zone holding it, a.example.com, and it serves namespace team-a\n",
			"held by public in zone example.com (seq",
			", not a provider the name goes to):",
		}},
		{"shop.a.example.com", "NamespaceNotAllowed", []string{
			"goes to: refused (NamespaceNotAllowed): provider team-a/dns (DNSProvider team-a/dns, zone a.example.com) serves this name and does not serve namespace shop\n",
		}},
		{"x.new.example.com", "", []string{
			"goes to: routed to ClusterDNSProvider fresh: it claims its domain new.example.com, but has not listed its zones yet: " +
				"nothing is planned for the name until it has (REFUSED), and it serves every namespace\n",
		}},
		{"www.example.org", "NoZone", []string{"goes to: refused (NoZone): no provider manages a zone holding this name\n"}},
	}
	for _, c := range cases {
		ex, err := ExplainName(ctx, js, c.name)
		if err != nil {
			t.Fatal(err)
		}
		if ex.Route == nil || ex.Route.Reason != c.reason {
			t.Errorf("%s: route %+v, want reason %q", c.name, ex.Route, c.reason)
		}
		var out bytes.Buffer
		ex.print(&out)
		for _, l := range c.lines {
			if !strings.Contains(out.String(), l) {
				t.Errorf("%s: explain output lacks %q:\n%s", c.name, l, out.String())
			}
		}
	}
}
