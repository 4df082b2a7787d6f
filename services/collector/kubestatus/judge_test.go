package kubestatus

import (
	"slices"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

var (
	web   = events.ObjectRef{Cluster: "eu", Source: "crd", Namespace: "default", Name: "web"}
	rival = events.ObjectRef{Cluster: "eu", Source: "service", Namespace: "default", Name: "rival"}
	far   = events.ObjectRef{Cluster: "us", Source: "crd", Namespace: "default", Name: "web"}
)

func a(name string, targets ...string) events.Endpoint {
	return events.Endpoint{DNSName: name, RecordType: "A", Targets: targets}
}

func txt(name, text string) events.Endpoint {
	return events.Endpoint{DNSName: name, RecordType: "TXT", Targets: []string{text}}
}

// desired is the desired state at name with obj owning eps.
func desired(name string, obj events.ObjectRef, eps ...events.Endpoint) *events.DesiredState {
	d := &events.DesiredState{DNSName: name, Endpoints: eps, Contributors: []events.ObjectRef{obj}}
	for _, ep := range eps {
		d.Holders = append(d.Holders, events.RRsetHolder{RecordType: ep.RecordType, Objects: []events.ObjectRef{obj}})
	}
	return d
}

func observed(provider, name string, recs ...events.Endpoint) *events.ObservedState {
	return &events.ObservedState{Provider: provider, DNSName: name, Records: recs}
}

func failedResult(name, err string) *events.Result {
	ep := a(name, "192.0.2.1")
	return &events.Result{Provider: "bind", Zone: "example.org", Status: events.ResultFailed,
		Failed: []events.FailedChange{{Change: events.Change{New: &ep}, Error: err}}}
}

func ownsEU(o events.ObjectRef) bool { return o.Cluster == "eu" }

// step is one message on the bus and what it must do to web at www.
type step struct {
	apply func(b *book) []Transition
	// scene: a step that only sets the scene, www not wanted yet.
	scene bool
	want  State
	// reason and detail, when set, must match (detail: a substring).
	reason, detail string
	failures       int
	// silent: the step reports no transition for web.
	silent bool
}

func TestOutcomeFollowsTheStreams(t *testing.T) {
	const www = "www.example.org"
	setD := func(d *events.DesiredState) func(b *book) []Transition {
		return func(b *book) []Transition { return b.setDesired(d) }
	}
	setO := func(o *events.ObservedState) func(b *book) []Transition {
		return func(b *book) []Transition { return b.setObserved(o) }
	}
	fail := func(err string) func(b *book) []Transition {
		return func(b *book) []Transition { return b.addResult(failedResult(www, err)) }
	}
	zones := func(zs ...string) func(b *book) []Transition {
		return func(b *book) []Transition { return b.setZones(&events.ZoneList{Provider: "bind", Zones: zs}) }
	}
	lost := &events.DesiredState{DNSName: www, Endpoints: []events.Endpoint{a(www, "192.0.2.7")},
		Contributors: []events.ObjectRef{rival},
		Holders:      []events.RRsetHolder{{RecordType: "A", Objects: []events.ObjectRef{rival}}},
		Losers:       []events.Loser{{Object: web, Reason: `source "service" outranks "crd"`}}}
	tests := []struct {
		name      string
		ownership registry.Settings
		steps     []step
	}{
		{"wanted, then held: published", registry.Settings{}, []step{
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending},
			{apply: setO(observed("bind", www, a(www, "192.0.2.9"))), want: Pending},
			{apply: setO(observed("bind", www, a(www, "192.0.2.1"))), want: Published, reason: ReasonProgrammed},
		}},
		{"held before it was wanted: published at once", registry.Settings{}, []step{
			{apply: setO(observed("bind", www, a(www, "192.0.2.1"))), scene: true},
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Published},
		}},
		{"failures counted until held", registry.Settings{}, []step{
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending},
			{apply: fail("connection refused"), want: Failed, reason: ReasonFailed, detail: "connection refused", failures: 1},
			{apply: fail("connection refused"), want: Failed, failures: 2},
			{apply: fail("REFUSED"), want: Failed, detail: "REFUSED", failures: 3},
			{apply: setO(observed("bind", www, a(www, "192.0.2.1"))), want: Published},
			{apply: setO(observed("bind", www)), want: Failed, failures: 3},
		}},
		{"outranked", registry.Settings{}, []step{
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending},
			{apply: setD(lost), want: Rejected, reason: ReasonOutranked, detail: "outranks"},
		}},
		{"no zone for the name", registry.Settings{}, []step{
			{apply: zones("example.com"), scene: true},
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Rejected, reason: ReasonNoZone},
			{apply: zones("example.com", "example.org"), want: Pending},
		}},
		{"held by another owner", registry.Settings{OwnerID: "me"}, []step{
			{apply: setO(observed("bind", www, a(www, "192.0.2.9"))), scene: true},
			{apply: setO(observed("bind", "a-"+www, txt("a-"+www, "heritage=external-dns,external-dns/owner=them"))), scene: true},
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Rejected, reason: ReasonNotOwned, detail: `owned by "them"`},
			{apply: setO(observed("bind", "a-"+www, txt("a-"+www, "heritage=external-dns,external-dns/owner=me"))), want: Pending},
		}},
		{"held without ownership record", registry.Settings{OwnerID: "me"}, []step{
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending},
			{apply: setO(observed("bind", www, a(www, "192.0.2.9"))), want: Rejected, reason: ReasonNotOwned, detail: "without an ownership record"},
		}},
		{"owner unknown: another's records read as pending", registry.Settings{}, []step{
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending},
			{apply: setO(observed("bind", www, a(www, "192.0.2.9"))), want: Pending},
		}},
		{"encrypted ownership may be ours", registry.Settings{OwnerID: "me"}, []step{
			{apply: setO(observed("bind", "a-"+www, txt("a-"+www, "SGVsbG8gd29ybGQgZW5jcnlwdGVkIHRleHQ="))), scene: true},
			{apply: setO(observed("bind", www, a(www, "192.0.2.9"))), scene: true},
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending},
		}},
		{"withdrawn for another cluster's object: deleted at once", registry.Settings{}, []step{
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending},
			{apply: setO(observed("bind", www, a(www, "192.0.2.1"))), want: Published},
			{apply: setD(desired(www, far, a(www, "192.0.2.5"))), want: Deleted},
		}},
		{"lost, then gone: no deletion of records that were not its own", registry.Settings{}, []step{
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending},
			{apply: setO(observed("bind", www, a(www, "192.0.2.1"))), want: Published},
			{apply: setD(lost), want: Rejected, reason: ReasonOutranked},
			{apply: setD(desired(www, rival, a(www, "192.0.2.7"))), want: Deleted, silent: true},
		}},
		{"withdrawn: deleted once the provider lets go", registry.Settings{}, []step{
			{apply: setD(desired(www, web, a(www, "192.0.2.1"))), want: Pending},
			{apply: setO(observed("bind", www, a(www, "192.0.2.1"))), want: Published},
			{apply: setD(&events.DesiredState{DNSName: www}), want: Pending, detail: "deletion not yet applied"},
			{apply: setO(observed("bind", www)), want: Deleted},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBook(ownsEU, tt.ownership)
			for i, s := range tt.steps {
				ts := s.apply(b)
				if s.silent && slices.ContainsFunc(ts, func(tr Transition) bool { return tr.Object == web }) {
					t.Fatalf("step %d: reported %+v", i, ts)
				}
				got, ok := b.at(web, www)
				if s.want == Deleted {
					if ok {
						t.Fatalf("step %d: web still tracked at %s: %+v", i, www, got.outcome)
					}
					continue
				}
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
				if o.State != s.want || s.reason != "" && o.Reason != s.reason ||
					!strings.Contains(o.Detail, s.detail) || s.failures != 0 && o.Failures != s.failures {
					t.Fatalf("step %d: got %+v, want %v reason %q detail ~%q failures %d", i, o, s.want, s.reason, s.detail, s.failures)
				}
			}
		})
	}
}

func TestOnlyThisClustersObjectsAreTracked(t *testing.T) {
	b := newBook(ownsEU, registry.Settings{})
	d := desired("www.example.org", far, a("www.example.org", "192.0.2.1"))
	if ts := b.setDesired(d); len(ts) != 0 || len(b.desired) != 0 {
		t.Fatalf("another cluster's object tracked: %v, %d names kept", ts, len(b.desired))
	}
	b.setObserved(observed("bind", "www.example.org", a("www.example.org", "192.0.2.1")))
	if len(b.objects) != 0 {
		t.Fatalf("objects tracked: %v", b.objects)
	}
}

func TestTransitionsAreReportedOnce(t *testing.T) {
	b := newBook(ownsEU, registry.Settings{})
	d := desired("www.example.org", web, a("www.example.org", "192.0.2.1"))
	if ts := b.setDesired(d); len(ts) != 1 || ts[0].To.State != Pending {
		t.Fatalf("first desired state: %+v", ts)
	}
	if ts := b.setDesired(d); len(ts) != 0 {
		t.Fatalf("the same desired state again reported %+v", ts)
	}
	o := observed("bind", "www.example.org", a("www.example.org", "192.0.2.1"))
	if ts := b.setObserved(o); len(ts) != 1 || ts[0].To.State != Published || ts[0].From.State != Pending {
		t.Fatalf("published: %+v", ts)
	}
	if ts := b.setObserved(o); len(ts) != 0 {
		t.Fatalf("the same observed state again reported %+v", ts)
	}
}

func TestNewsworthy(t *testing.T) {
	failed := func(n int) Outcome { return Outcome{State: Failed, Reason: ReasonFailed, Detail: "x", Failures: n} }
	tests := []struct {
		from, to Outcome
		want     bool
	}{
		{Outcome{}, Outcome{State: Published}, true},
		{Outcome{State: Published}, Outcome{State: Pending}, false},
		{Outcome{State: Pending}, failed(1), true},
		{failed(1), failed(2), false},
		{failed(4), failed(RepeatedFailures), true},
		{failed(RepeatedFailures), failed(RepeatedFailures + 1), false},
		{failed(2), Outcome{State: Failed, Detail: "other", Failures: 3}, true},
		{Outcome{State: Published}, Outcome{State: Deleted}, true},
		{Outcome{State: Pending}, Outcome{State: Rejected, Reason: ReasonNotOwned}, true},
	}
	for _, tt := range tests {
		if got := newsworthy(Transition{From: tt.from, To: tt.to}); got != tt.want {
			t.Errorf("%+v -> %+v: newsworthy %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
}

func TestReadyCondition(t *testing.T) {
	pub := Outcome{State: Published, Reason: ReasonProgrammed}
	tests := []struct {
		name     string
		outcomes map[string]Outcome
		status   string
		reason   string
		message  string
	}{
		{"all published", map[string]Outcome{"a.example.org": pub, "b.example.org": pub}, "True", ReasonProgrammed, "2 name(s) published"},
		{"one pending", map[string]Outcome{"a.example.org": pub, "b.example.org": {State: Pending}}, "False", ReasonPending, "b.example.org pending"},
		{"failure wins over rejection", map[string]Outcome{
			"a.example.org": {State: Rejected, Reason: ReasonNotOwned, Detail: "theirs"},
			"b.example.org": {State: Failed, Reason: ReasonFailed, Detail: "REFUSED", Failures: 5},
		}, "False", ReasonFailed, "b.example.org failed 5 times in a row: REFUSED"},
		{"rejected says why", map[string]Outcome{"a.example.org": {State: Rejected, Reason: ReasonNotOwned, Detail: "theirs"}},
			"False", ReasonNotOwned, "a.example.org rejected (NotOwned): theirs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ReadyCondition(tt.outcomes, 7)
			if string(c.Status) != tt.status || c.Reason != tt.reason || !strings.Contains(c.Message, tt.message) || c.ObservedGeneration != 7 {
				t.Fatalf("got %+v, want %s %s ~%q", c, tt.status, tt.reason, tt.message)
			}
		})
	}
}

func TestRegistryNames(t *testing.T) {
	tests := []struct {
		o    registry.Settings
		name string
		want [2]string
	}{
		{registry.Settings{}, "www.example.org", [2]string{"a-www.example.org", "www.example.org"}},
		{registry.Settings{Prefix: "txt."}, "www.example.org", [2]string{"txt.a-www.example.org", "txt.www.example.org"}},
		{registry.Settings{Suffix: "-txt"}, "www.example.org", [2]string{"a-www-txt.example.org", "www-txt.example.org"}},
		{registry.Settings{Prefix: "%{record_type}."}, "www.example.org", [2]string{"a.www.example.org", ".www.example.org"}},
		{registry.Settings{WildcardReplacement: "any"}, "*.example.org", [2]string{"a-any.example.org", "any.example.org"}},
	}
	for _, tt := range tests {
		if got := newBook(ownsEU, tt.o).registryNames(tt.name, "A"); got != tt.want {
			t.Errorf("%+v %s: %v, want %v", tt.o, tt.name, got, tt.want)
		}
	}
}
