package kubestatus

import (
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

// declared is the zone list of a provider a DNSProvider object declares.
func declared(provider string, zones []string, scope events.ProviderScope) *events.ZoneList {
	if scope.Declared == "" {
		scope.Declared = provider
	}
	return &events.ZoneList{Provider: provider, Zones: zones, Scope: &scope}
}

func TestDeclaredProvidersDecideTheOutcome(t *testing.T) {
	const www = "www.example.org"
	setD := func(d *events.DesiredState) func(b *book) []Transition {
		return func(b *book) []Transition { return b.setDesired(d) }
	}
	setO := func(o *events.ObservedState) func(b *book) []Transition {
		return func(b *book) []Transition { return b.setObserved(o) }
	}
	setZ := func(z *events.ZoneList) func(b *book) []Transition {
		return func(b *book) []Transition { return b.setZones(z) }
	}
	flags := &events.ZoneList{Provider: "bind", Zones: []string{"example.org"}}
	ours := events.ProviderScope{Namespaces: []string{"default"}}
	mine := "heritage=external-dns,external-dns/owner=me"
	tests := []struct {
		name      string
		ownership registry.Settings
		steps     []step
	}{
		{"a provider that does not serve the object's namespace", registry.Settings{}, []step{
			{apply: setZ(flags), scene: true},
			{apply: setZ(declared("team-a/dns", []string{"www.example.org"}, events.ProviderScope{Namespaces: []string{"team-a"}})), scene: true},
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Rejected, reason: ReasonNamespaceNotAllowed,
				detail: "provider team-a/dns (DNSProvider team-a/dns, zone www.example.org) serves this name and does not serve namespace default"},
			{apply: setZ(declared("team-a/dns", []string{"www.example.org"}, events.ProviderScope{Namespaces: []string{"team-a", "default"}})),
				want: Pending},
		}},
		{"two providers serving it equally", registry.Settings{}, []step{
			{apply: setZ(declared("default/dns", []string{"example.org"}, ours)), scene: true},
			{apply: setZ(declared("/public", []string{"example.org"}, events.ProviderScope{Namespaces: []string{events.AllNamespaces}})), scene: true},
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Rejected, reason: ReasonProviderTie, detail: "ClusterDNSProvider public"},
			{apply: setZ(&events.ZoneList{Provider: "/public"}), want: Pending},
		}},
		{"a provider that has not listed its zones yet", registry.Settings{}, []step{
			{apply: setZ(flags), scene: true},
			{apply: setZ(declared("default/dns", nil, events.ProviderScope{Namespaces: []string{"default"}, Domains: []string{"www.example.org"},
				Problem: "NOTAUTH listing zones"})), scene: true},
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending,
				detail: "provider default/dns has not listed its zones yet: NOTAUTH listing zones"},
			{apply: setO(observed("bind", www, a(www, "192.0.2.1"))), want: Pending, detail: "has not listed its zones yet"},
			{apply: setZ(declared("default/dns", []string{"example.org"}, events.ProviderScope{Namespaces: []string{"default"}, Domains: []string{"www.example.org"}})),
				want: Pending},
		}},
		{"published only by the provider it goes to", registry.Settings{}, []step{
			{apply: setZ(flags), scene: true},
			{apply: setZ(declared("default/dns", []string{"www.example.org"}, ours)), scene: true},
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending},
			{apply: setO(observed("bind", www, a(www, "192.0.2.1"))), want: Pending},
			{apply: setO(observed("default/dns", www, a(www, "192.0.2.1"))), want: Published, reason: ReasonProgrammed},
		}},
		{"a listing problem is told while pending", registry.Settings{}, []step{
			{apply: setZ(declared("default/dns", []string{"example.org"}, events.ProviderScope{Namespaces: []string{"default"}, Problem: "connection refused"})), scene: true},
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending, detail: "provider default/dns: connection refused"},
		}},
		{"a quota full refuses a new name, until one goes", registry.Settings{OwnerID: "me"}, []step{
			{apply: setZ(declared("default/dns", []string{"example.org"}, events.ProviderScope{Namespaces: []string{"default"}, Quota: 1})), scene: true},
			{apply: setO(observed("default/dns", "a-old.example.org", txt("a-old.example.org", mine))), scene: true},
			{apply: setO(observed("default/dns", "old.example.org", a("old.example.org", "192.0.2.3"))), scene: true},
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Rejected, reason: ReasonOverQuota,
				detail: "provider default/dns holds 1 names, its quota (DNSProvider default/dns)"},
			{apply: setO(observed("default/dns", "a-old.example.org")), want: Pending},
			{apply: setO(observed("default/dns", "a-old.example.org", txt("a-old.example.org", mine))), want: Rejected, reason: ReasonOverQuota},
		}},
		{"a name held already is never refused by the quota", registry.Settings{OwnerID: "me"}, []step{
			{apply: setZ(declared("default/dns", []string{"example.org"}, events.ProviderScope{Namespaces: []string{"default"}, Quota: 1})), scene: true},
			{apply: setO(observed("default/dns", "a-"+www, txt("a-"+www, mine))), scene: true},
			{apply: setO(observed("default/dns", www, a(www, "192.0.2.9"))), scene: true},
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending},
			{apply: setO(observed("default/dns", www, a(www, "192.0.2.1"))), want: Published},
		}},
		{"another owner's names do not count", registry.Settings{OwnerID: "me"}, []step{
			{apply: setZ(declared("default/dns", []string{"example.org"}, events.ProviderScope{Namespaces: []string{"default"}, Quota: 1})), scene: true},
			{apply: setO(observed("default/dns", "a-old.example.org", txt("a-old.example.org", "heritage=external-dns,external-dns/owner=them"))), scene: true},
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBook(ownsEU, tt.ownership)
			for i, s := range tt.steps {
				s.apply(b)
				got, ok := b.at(web, www)
				if s.scene {
					if ok {
						t.Fatalf("step %d: web tracked before it wants %s", i, www)
					}
					continue
				}
				if !ok {
					t.Fatalf("step %d: web not tracked at %s", i, www)
				}
				o := got.outcome
				if o.State != s.want || s.reason != "" && o.Reason != s.reason || !strings.Contains(o.Detail, s.detail) {
					t.Fatalf("step %d: got %+v, want %v reason %q detail ~%q", i, o, s.want, s.reason, s.detail)
				}
			}
		})
	}
}

// The namespaces a name is routed by are those of every object wanting
// it, of any cluster: one of another cluster's namespaces the provider
// does not serve refuses the name for this cluster's object too, as the
// planner does.
func TestEveryContributorsNamespaceCounts(t *testing.T) {
	const www = "www.example.org"
	b := newBook(ownsEU, registry.Settings{})
	b.setZones(declared("default/dns", []string{"example.org"}, events.ProviderScope{Namespaces: []string{"default"}}))
	d := desired(www, web, a(www, "192.0.2.1"))
	d.Contributors = append(d.Contributors, events.ObjectRef{Cluster: "us", Source: "service", Namespace: "shop", Name: "web"})
	b.setDesired(d)
	got, _ := b.at(web, www)
	if got.outcome.State != Rejected || got.outcome.Reason != ReasonNamespaceNotAllowed || !strings.Contains(got.outcome.Detail, "namespace shop") {
		t.Fatalf("got %+v, want NamespaceNotAllowed naming namespace shop", got.outcome)
	}
}

func TestTheNewRefusalsReachTheConditionAndEvents(t *testing.T) {
	for _, reason := range []string{ReasonNamespaceNotAllowed, ReasonProviderTie, ReasonOverQuota} {
		o := Outcome{State: Rejected, Reason: reason, Detail: "provider a/dns holds 100 names, its quota"}
		warning, ev, action, ok := EventOf(o)
		if !ok || !warning || ev != EventRecordRejected || action != reason {
			t.Errorf("%s: Event %v %s %s %v, want a Warning RecordRejected %s", reason, warning, ev, action, ok, reason)
		}
		c := ReadyCondition(map[string]Outcome{"www.example.org": o}, 1)
		if c.Status != "False" || c.Reason != reason || !strings.Contains(c.Message, "www.example.org rejected ("+reason+"): provider a/dns") {
			t.Errorf("%s: condition %+v", reason, c)
		}
	}
}
