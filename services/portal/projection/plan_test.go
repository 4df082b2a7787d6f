package projection

import (
	"reflect"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
)

// A plan's changes reach each name they touch, its ownership record's
// with it, kept until someone looks: whether the plan came after the
// name's desired state or before it.
func TestEachNameShowsItsShareOfAPlan(t *testing.T) {
	p := New(Options{Grace: time.Minute})
	const zone = "example.org"
	take := feeder(t, time.Now)
	endpoint := func(name, rtype string, targets ...string) *events.Endpoint {
		ep := events.NewEndpoint(name, rtype, 300, targets...)
		return &ep
	}
	wwwOld, wwwNew := endpoint("www.example.org", "A", "10.0.0.1"), endpoint("www.example.org", "A", "10.0.0.2")
	wwwTXT := endpoint("a-www.example.org", "TXT", "heritage=external-dns,external-dns/owner=default")
	api := endpoint("api.example.org", "CNAME", "lb.example.net")
	apiTXT := endpoint("cname-api.example.org", "TXT", "heritage=external-dns,external-dns/owner=default")
	take(p.ApplyDesired, events.DesiredSubject("www.example.org"), &events.DesiredState{DNSName: "www.example.org", Endpoints: []events.Endpoint{*wwwNew}})
	plan := &events.Plan{ID: "p1", Provider: "bind", Zone: zone, Changes: []events.Change{
		{Old: wwwOld, New: wwwNew}, {New: api}, {New: apiTXT}, {Old: wwwTXT, New: wwwTXT}}}
	take(p.ApplyPlan, events.PlanSubject("bind", zone), plan)
	take(p.ApplyDesired, events.DesiredSubject("api.example.org"), &events.DesiredState{DNSName: "api.example.org", Endpoints: []events.Endpoint{*api}})

	for name, want := range map[string][]events.Change{
		"www.example.org": {plan.Changes[0], plan.Changes[3]},
		"api.example.org": {plan.Changes[1], plan.Changes[2]},
	} {
		v, ok := p.Get(name)
		if !ok || v.Plan == nil {
			t.Fatalf("%s: no view or no plan: %+v", name, v)
		}
		if v.Plan.ID != "p1" || v.Plan.Zone != zone || !reflect.DeepEqual(v.Plan.Changes, want) {
			t.Errorf("%s: plan %s in %s with changes %v, want p1 in %s with %v", name, v.Plan.ID, v.Plan.Zone, v.Plan.Changes, zone, want)
		}
	}
}
