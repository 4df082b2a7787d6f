package routing

import (
	"slices"
	"testing"

	"github.com/zonestream/zonestream/events"
)

func list(provider string, zones []string, scope *events.ProviderScope) *events.ZoneList {
	return &events.ZoneList{Provider: provider, Zones: zones, Scope: scope}
}

func team(ns string, domains ...string) *events.ProviderScope {
	return &events.ProviderScope{Declared: ns + "/dns", Namespaces: []string{ns}, Domains: domains}
}

func TestRoute(t *testing.T) {
	tests := []struct {
		name       string
		lists      []*events.ZoneList
		dnsName    string
		namespaces []string
		want       []string
		reason     Reason
	}{
		{"flags only: every provider holding the name, as before",
			[]*events.ZoneList{list("public", []string{"example.com"}, nil), list("private", []string{"in.example.com"}, nil)},
			"a.in.example.com", []string{"x"}, []string{"private", "public"}, ""},
		{"no zone", []*events.ZoneList{list("public", []string{"example.com"}, nil)},
			"a.example.org", nil, nil, NoZone},
		{"a team's zone takes its names from the platform's wider zone",
			[]*events.ZoneList{list("public", []string{"example.com"}, nil), list("a/dns", []string{"a.example.com"}, team("a"))},
			"www.a.example.com", []string{"a"}, []string{"a/dns"}, ""},
		{"another team may not write into it, nor through the wider zone",
			[]*events.ZoneList{list("public", []string{"example.com"}, nil), list("a/dns", []string{"a.example.com"}, team("a"))},
			"www.a.example.com", []string{"b"}, nil, NotAllowed},
		{"one object of a foreign namespace refuses the name",
			[]*events.ZoneList{list("a/dns", []string{"a.example.com"}, team("a"))},
			"www.a.example.com", []string{"a", "b"}, nil, NotAllowed},
		{"cluster-scoped objects only through a provider for all namespaces",
			[]*events.ZoneList{list("a/dns", []string{"a.example.com"}, team("a"))},
			"node.a.example.com", []string{""}, nil, NotAllowed},
		{"all namespaces",
			[]*events.ZoneList{list("/public", []string{"example.com"}, &events.ProviderScope{Declared: "/public", Namespaces: []string{events.AllNamespaces}})},
			"node.example.com", []string{""}, []string{"/public"}, ""},
		{"a tie is refused",
			[]*events.ZoneList{list("a/dns", []string{"example.com"}, team("a")), list("b/dns", []string{"example.com"}, team("b"))},
			"www.example.com", []string{"a"}, nil, Tie},
		{"a tie with a flag provider is refused too",
			[]*events.ZoneList{list("public", []string{"example.com"}, nil), list("a/dns", []string{"example.com"}, team("a"))},
			"www.example.com", []string{"a"}, nil, Tie},
		{"a domain narrower than the zone is more specific",
			[]*events.ZoneList{list("a/dns", []string{"example.com"}, team("a", "a.example.com")), list("b/dns", []string{"example.com"}, team("b", "b.example.com"))},
			"www.b.example.com", []string{"b"}, []string{"b/dns"}, ""},
		{"outside its domains a provider serves nothing",
			[]*events.ZoneList{list("a/dns", []string{"example.com"}, team("a", "a.example.com"))},
			"www.example.com", []string{"a"}, nil, NoZone},
		{"an excluded name falls to the wider zone",
			[]*events.ZoneList{list("public", []string{"example.com"}, nil),
				list("a/dns", []string{"a.example.com"}, &events.ProviderScope{Declared: "a/dns", Namespaces: []string{"a"}, Exclude: []string{"old.a.example.com"}})},
			"x.old.a.example.com", []string{"a"}, []string{"public"}, ""},
		{"another namespace's grant does not take a team's names from its own provider",
			[]*events.ZoneList{list("a/dns", []string{"a.example.com"}, team("a")),
				list("b/dns", []string{"app.a.example.com"}, &events.ProviderScope{Declared: "b/dns", Namespaces: []string{"a", "b"}})},
			"x.app.a.example.com", []string{"a"}, []string{"a/dns"}, ""},
		{"nor does another namespace's narrower claim refuse them",
			[]*events.ZoneList{list("a/dns", []string{"a.example.com"}, team("a")), list("b/dns", []string{"app.a.example.com"}, team("b"))},
			"x.app.a.example.com", []string{"a"}, []string{"a/dns"}, ""},
		{"the grant serves the other namespace where it has no provider of its own",
			[]*events.ZoneList{list("b/dns", []string{"app.a.example.com"}, &events.ProviderScope{Declared: "b/dns", Namespaces: []string{"a", "b"}})},
			"x.app.a.example.com", []string{"a"}, []string{"b/dns"}, ""},
		{"and its own namespace's names",
			[]*events.ZoneList{list("a/dns", []string{"a.example.com"}, team("a")),
				list("b/dns", []string{"app.a.example.com"}, &events.ProviderScope{Declared: "b/dns", Namespaces: []string{"a", "b"}})},
			"x.app.a.example.com", []string{"b"}, []string{"b/dns"}, ""},
		{"a retiring provider takes nothing new",
			[]*events.ZoneList{list("a/dns", []string{"a.example.com"}, &events.ProviderScope{Declared: "a/dns", Namespaces: []string{"a"}, Retiring: true})},
			"x.a.example.com", []string{"a"}, nil, NoZone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab := New()
			for _, l := range tc.lists {
				tab.Set(l)
			}
			d := tab.Route(tc.dnsName, tc.namespaces)
			if !slices.Equal(d.Providers, tc.want) || d.Reason != tc.reason {
				t.Fatalf("Route(%s, %v) = %v %s (%s), want %v %s", tc.dnsName, tc.namespaces, d.Providers, d.Reason, d.Detail, tc.want, tc.reason)
			}
			if d.Refused() && d.Detail == "" {
				t.Fatal("a refusal without a detail")
			}
			if (d.Reason == Tie) != (len(d.Tied) == 2) {
				t.Fatalf("a tie names its two providers, nothing else does: %v", d.Tied)
			}
		})
	}
}

func TestSetWithoutZonesOrScopeRemoves(t *testing.T) {
	tab := New()
	tab.Set(list("p", []string{"example.com"}, nil))
	tab.Set(list("p", nil, nil))
	if tab.Len() != 0 {
		t.Fatal("a provider without zones stayed")
	}
	tab.Set(list("a/dns", nil, team("a")))
	if _, ok := tab.Get("a/dns"); !ok {
		t.Fatal("a declared provider without zones (failing, or not listed yet) must stay known")
	}
}

func TestKind(t *testing.T) {
	if Kind(events.DeclaredProvider("", "public")) != "ClusterDNSProvider public" || Kind(events.DeclaredProvider("a", "dns")) != "DNSProvider a/dns" {
		t.Fatal(Kind("/public"), Kind("a/dns"))
	}
}

func TestUnlistedProviderClaimsItsDomains(t *testing.T) {
	tab := New()
	tab.Set(list("public", []string{"example.com"}, nil))
	tab.Set(list("a/dns", nil, team("a", "a.example.com")))
	d := tab.Route("www.a.example.com", []string{"a"})
	if !slices.Equal(d.Providers, []string{"a/dns"}) || d.Zone["a/dns"] != "" {
		t.Fatalf("a declared provider not listed yet must hold its domains' names: %+v", d)
	}
	if d := tab.Route("www.example.com", []string{"a"}); !slices.Equal(d.Providers, []string{"public"}) {
		t.Fatalf("outside its domains: %+v", d)
	}
	tab.Set(list("b/dns", nil, team("b")))
	if d := tab.Route("www.example.com", []string{"b"}); !slices.Equal(d.Providers, []string{"public"}) {
		t.Fatalf("a declared provider with neither zones nor domains claims nothing: %+v", d)
	}
}
