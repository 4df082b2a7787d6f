package portal_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/portal"
	"github.com/zonestream/zonestream/services/portal/history"
	"github.com/zonestream/zonestream/services/portal/web"
)

// TestHistoryChain reads a name's history by subject, newest first,
// linked by causation ids, with the plan the portal saw go by, through
// the JSON API.
func TestHistoryChain(t *testing.T) {
	js := bus(t)
	p := start(t, js, portal.Config{Listen: "127.0.0.1:0", Grace: time.Minute})
	name := "shop." + zone
	publish(t, js, events.ZonesSubject("bind"), &events.ZoneList{Provider: "bind", Zones: []string{zone}}, "")
	want := a(name, "192.0.2.8")
	src := publish(t, js, shopWeb.Subject(), &events.SourceState{Object: shopWeb, Endpoints: []events.Endpoint{want}}, "")
	des := publish(t, js, events.DesiredSubject(name), desired(name, shopWeb, want), src)
	plan := &events.Plan{ID: "p1", Provider: "bind", Zone: zone, Changes: []events.Change{{New: &want}}}
	planEvent := publish(t, js, events.PlanSubject("bind", zone), plan, des)
	waitFor(t, "the plan to be seen", func() bool {
		v, _ := p.Projection().Get(name)
		return v.Plan != nil
	})
	publish(t, js, events.ObservedSubject("bind", name), observed("bind", zone, name, want), planEvent)
	publish(t, js, events.ResultSubject("bind", zone), &events.Result{PlanID: "p1", Provider: "bind", Zone: zone,
		Status: events.ResultApplied, Applied: 1}, planEvent)
	// The observed state and the result come through watches of two
	// streams, so either may reach the projection first: wait for both.
	waitFor(t, "the observed state and the result to reach the name", func() bool {
		v, _ := p.Projection().Get(name)
		return v.Observed["bind"] != nil && v.Result != nil && v.Result.PlanID == "p1"
	})

	resp, err := http.Get("http://" + p.Addr() + "/api/names/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d web.Detail
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		t.Fatal(err)
	}
	var kinds, causes []string
	for _, e := range d.History {
		kinds = append(kinds, string(e.Kind))
		causes = append(causes, e.Cause)
	}
	wantKinds := []string{"result", "observed", "plan", "desired", "source"}
	if !slices.Equal(kinds, wantKinds) {
		t.Fatalf("history %v, want %v (newest first)", kinds, wantKinds)
	}
	wantCauses := []string{"plan p1", "plan p1", "desired #1", "source #1", ""}
	if !slices.Equal(causes, wantCauses) {
		t.Fatalf("causes %q, want %q", causes, wantCauses)
	}
	if d.Status != "in sync" || d.Desired == nil || d.Plan == nil || d.Result == nil {
		t.Fatalf("detail %+v: want the desired state, the plan and its result", d.View)
	}

	// Without the portal, from the streams alone: the plan is gone from
	// them once applied, its result says which it was.
	entries, err := history.Read(context.Background(), js, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 || entries[0].Kind != history.KindResult || entries[0].PlanID != "p1" || entries[1].Cause != "plan p1" {
		t.Fatalf("history from the streams: %+v", entries)
	}
	if !strings.Contains(entries[3].Summary, "prod/service/shop/web wants A 192.0.2.8") {
		t.Fatalf("source entry says %q", entries[3].Summary)
	}
}
