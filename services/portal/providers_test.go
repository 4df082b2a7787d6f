package portal_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/domains"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/services/portal"
	"github.com/zonestream/zonestream/services/portal/projection"
	"github.com/zonestream/zonestream/services/portal/web"
)

// TestProvidersAPI: each name says which provider it goes to, or why it
// goes to none, as events/routing decides; /api/providers lists every
// provider of the zone lists with its scope, the names it holds for us
// and those that go to it; the page shows both.
func TestProvidersAPI(t *testing.T) {
	js := bus(t)
	p := start(t, js, portal.Config{Listen: "127.0.0.1:0", Grace: time.Minute, Ownership: registry.Settings{OwnerID: "me"}})
	teamA := events.DeclaredProvider("team-a", "dns")
	sub := "a." + zone
	publish(t, js, events.ZonesSubject("bind"), &events.ZoneList{Provider: "bind", Zones: []string{zone}}, "")
	publish(t, js, events.ZonesSubject(teamA), &events.ZoneList{Provider: teamA, Zones: []string{sub},
		Scope: &events.ProviderScope{Declared: teamA, Namespaces: []string{"team-a"}, Quota: 10, Problem: "NOTAUTH"}}, "")
	app := events.ObjectRef{Cluster: "prod", Source: "service", Namespace: "team-a", Name: "app"}
	for _, d := range []*events.DesiredState{
		desired("web."+zone, shopWeb, a("web."+zone, "192.0.2.1")),
		desired("app."+sub, app, a("app."+sub, "192.0.2.2")),
		desired("shop."+sub, shopWeb, a("shop."+sub, "192.0.2.3")),
	} {
		publish(t, js, events.DesiredSubject(d.DNSName), d, "")
	}
	publish(t, js, events.ObservedSubject(teamA, "a-old."+sub), observed(teamA, sub, "a-old."+sub, ownership("old."+sub, "me")), "")
	publish(t, js, events.ObservedSubject(teamA, "a-theirs."+sub), observed(teamA, sub, "a-theirs."+sub, ownership("theirs."+sub, "them")), "")
	refused := waitStatus(t, p, "shop."+sub, projection.NotManaged)
	if refused.Refused == nil || refused.Refused.Reason != "NamespaceNotAllowed" || len(refused.Providers) != 0 ||
		!strings.Contains(refused.Reason, "DNSProvider team-a/dns") || !strings.Contains(refused.Reason, "namespace shop") {
		t.Errorf("shop.%s: %+v, %q: want refused NamespaceNotAllowed naming DNSProvider team-a/dns and namespace shop",
			sub, refused.Refused, refused.Reason)
	}
	base := "http://" + p.Addr()
	var d web.Detail
	getJSON(t, base+"/api/names/app."+sub, &d)
	if !slices.Equal(d.Providers, []string{teamA}) || d.Provider != teamA || d.Zone != sub || d.Refused != nil {
		t.Errorf("app.%s goes to %v (zone %s, refused %+v), want [%s] zone %s", sub, d.Providers, d.Zone, d.Refused, teamA, sub)
	}

	var ps web.Providers
	waitFor(t, "the names held for us counted", func() bool {
		getJSON(t, base+"/api/providers", &ps)
		return len(ps.Providers) == 2 && ps.Providers[1].Held == 1
	})
	bind, team := ps.Providers[0], ps.Providers[1]
	if bind.Name != "bind" || bind.DeclaredBy != "flags" || !slices.Equal(bind.Zones, []string{zone}) || bind.Names != 1 {
		t.Errorf("bind: %+v, want flags, zone %s, 1 name", bind, zone)
	}
	if team.Name != teamA || team.DeclaredBy != "DNSProvider team-a/dns" || !slices.Equal(team.Zones, []string{sub}) ||
		!slices.Equal(team.Namespaces, []string{"team-a"}) || team.Quota != 10 || team.Held != 1 || team.Problem != "NOTAUTH" ||
		team.Names != 1 || team.Counts[projection.Pending] != 1 {
		t.Errorf("team-a/dns: %+v, want its scope, 1 name held of quota 10 (not another owner's), 1 pending name going to it", team)
	}

	var l web.List
	getJSON(t, base+"/api/names?provider="+teamA, &l)
	if l.Total != 1 || l.Names[0].Name != "app."+sub || !slices.Equal(l.Names[0].Providers, []string{teamA}) {
		t.Errorf("?provider=%s: %+v, want app.%s alone", teamA, l.Names, sub)
	}

	page := get(t, base+"/")
	for _, want := range []string{`id="providers"`, `data-provider="team-a/dns"`, "DNSProvider team-a/dns", "1 held of 10",
		`<td class="providers">NamespaceNotAllowed</td>`, `<td class="providers">team-a/dns</td>`, `id="groups"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if detail := get(t, base+"/names/shop."+sub); !strings.Contains(detail, `id="route"`) ||
		!strings.Contains(detail, "no provider: NamespaceNotAllowed") {
		t.Errorf("the detail page does not say where shop.%s goes", sub)
	}
}

// TestNamesWaitForADeclaredProviderNotListedYet: a DNSProvider whose zones
// are not listed yet still claims its domains; its names are pending, and
// say why, rather than not managed or planned elsewhere.
func TestNamesWaitForADeclaredProviderNotListedYet(t *testing.T) {
	js := bus(t)
	p := start(t, js, portal.Config{Listen: "127.0.0.1:0", Grace: time.Minute})
	public := events.DeclaredProvider("", "public")
	publish(t, js, events.ZonesSubject("bind"), &events.ZoneList{Provider: "bind", Zones: []string{zone}}, "")
	publish(t, js, events.ZonesSubject(public), &events.ZoneList{Provider: public, Scope: &events.ProviderScope{Declared: public,
		Domains: []string{"new." + zone}, Namespaces: []string{events.AllNamespaces}, Problem: "REFUSED listing zones"}}, "")
	name := "x.new." + zone
	publish(t, js, events.DesiredSubject(name), desired(name, shopWeb, a(name, "192.0.2.1")), "")
	// What the flag provider of the wider zone holds is not the name's.
	publish(t, js, events.ObservedSubject("bind", name), observed("bind", zone, name, a(name, "192.0.2.1")), "")
	waitFor(t, "the observed state in view", func() bool {
		v, _ := p.Projection().Get(name)
		return v.Observed["bind"] != nil
	})
	v := waitStatus(t, p, name, projection.Pending)
	if v.Reason != "provider /public has not listed its zones yet: REFUSED listing zones" || v.Provider != public {
		t.Errorf("%s: %q, going to %v: want it pending for /public, with its listing error", name, v.Reason, v.Providers)
	}
	publish(t, js, events.ZonesSubject(public), &events.ZoneList{Provider: public, Zones: []string{zone}, Scope: &events.ProviderScope{Declared: public,
		Domains: []string{"new." + zone}, Namespaces: []string{events.AllNamespaces}}}, "")
	waitFor(t, "the zone listed", func() bool { v, _ := p.Projection().Get(name); return v.Zone == zone })
	if v, _ := p.Projection().Get(name); v.Status != projection.Pending || !strings.Contains(v.Reason, "does not hold it yet") {
		t.Errorf("%s once listed: %s %q, want pending: /public does not hold it (bind's records are not its)", name, v.Status, v.Reason)
	}
}

// TestOverQuotaIsShown: a name new to a DNSProvider that holds its quota
// of names for us is refused by the planner; the portal says so, and
// says it no longer once a name is freed.
func TestOverQuotaIsShown(t *testing.T) {
	js := bus(t)
	p := start(t, js, portal.Config{Listen: "127.0.0.1:0", Grace: time.Minute, Ownership: registry.Settings{OwnerID: "me"}})
	teamA := events.DeclaredProvider("team-a", "dns")
	sub := "a." + zone
	publish(t, js, events.ZonesSubject(teamA), &events.ZoneList{Provider: teamA, Zones: []string{sub},
		Scope: &events.ProviderScope{Declared: teamA, Namespaces: []string{"team-a"}, Quota: 1}}, "")
	publish(t, js, events.ObservedSubject(teamA, "a-old."+sub), observed(teamA, sub, "a-old."+sub, ownership("old."+sub, "me")), "")
	app := events.ObjectRef{Cluster: "prod", Source: "service", Namespace: "team-a", Name: "app"}
	name := "app." + sub
	publish(t, js, events.DesiredSubject(name), desired(name, app, a(name, "192.0.2.2")), "")
	v := waitStatus(t, p, name, projection.NotManaged)
	if v.Reason != "OverQuota: provider team-a/dns holds 1 names, its quota (DNSProvider team-a/dns)" {
		t.Errorf("%s: %q, want the quota named", name, v.Reason)
	}
	publish(t, js, events.ObservedSubject(teamA, "a-old."+sub), observed(teamA, sub, "a-old."+sub), "")
	waitStatus(t, p, name, projection.Pending)
}

func get(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDomainFilterIsTheFlagProvidersFilter: the planner's domain filter
// (the portal is given the same) leaves out names of the providers
// declared by flags; a name going to a DNSProvider is filtered by its own
// domains instead, as the planner plans it.
func TestDomainFilterIsTheFlagProvidersFilter(t *testing.T) {
	js := bus(t)
	p := start(t, js, portal.Config{Listen: "127.0.0.1:0", Grace: time.Minute, Domains: domains.Settings{Include: []string{"example.net"}}})
	teamA := events.DeclaredProvider("team-a", "dns")
	sub := "a." + zone
	publish(t, js, events.ZonesSubject("bind"), &events.ZoneList{Provider: "bind", Zones: []string{zone}}, "")
	publish(t, js, events.ZonesSubject(teamA), &events.ZoneList{Provider: teamA, Zones: []string{sub},
		Scope: &events.ProviderScope{Declared: teamA, Namespaces: []string{"team-a"}}}, "")
	app := events.ObjectRef{Cluster: "prod", Source: "service", Namespace: "team-a", Name: "app"}
	for _, d := range []*events.DesiredState{desired("web."+zone, shopWeb, a("web."+zone, "192.0.2.1")),
		desired("app."+sub, app, a("app."+sub, "192.0.2.2"))} {
		publish(t, js, events.DesiredSubject(d.DNSName), d, "")
	}
	if v := waitStatus(t, p, "web."+zone, projection.NotManaged); !strings.HasPrefix(v.Reason, "filtered out") {
		t.Errorf("web.%s: %q, want filtered out", zone, v.Reason)
	}
	if v := waitStatus(t, p, "app."+sub, projection.Pending); v.Provider != teamA {
		t.Errorf("app.%s: %s %q going to %v, want pending for %s", sub, v.Status, v.Reason, v.Providers, teamA)
	}
}
