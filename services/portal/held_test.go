package portal_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/services/portal"
	"github.com/zonestream/zonestream/services/portal/projection"
)

// TestHeldDeletesAreShown: a name whose delete the planner's mass-delete
// guard holds is "delete held", with the hold's ID and changes; the zone's
// hold is listed by the API and on the page; once the hold is released
// the name's status follows its records again.
func TestHeldDeletesAreShown(t *testing.T) {
	js := bus(t)
	p := start(t, js, portal.Config{Listen: "127.0.0.1:0", Grace: time.Minute, Ownership: registry.Settings{OwnerID: "us"}})
	publish(t, js, events.ZonesSubject("bind"), &events.ZoneList{Provider: "bind", Zones: []string{zone}}, "")
	name := "gone." + zone
	rec, own := a(name, "192.0.2.9"), ownership(name, "us")
	publish(t, js, events.DesiredSubject(name), &events.DesiredState{DNSName: name}, "")
	publish(t, js, events.ObservedSubject("bind", name), observed("bind", zone, name, rec), "")
	publish(t, js, events.ObservedSubject("bind", own.DNSName), observed("bind", zone, own.DNSName, own), "")
	changes := []events.Change{{Old: &rec}, {Old: &own}}
	h := &events.HeldDeletes{ID: events.HeldID("bind", zone, changes), Provider: "bind", Zone: zone, Changes: changes,
		Deletes: 1, Owned: 1, MaxDeletes: 0, MaxDeletesPercent: 50}
	publish(t, js, events.HeldSubject("bind", zone), h, "")

	v := waitStatus(t, p, name, projection.DeleteHeld)
	if v.Held == nil || v.Held.ID != h.ID || len(v.Held.Changes) != 2 || !strings.Contains(v.Reason, "zonestream plans approve "+h.ID) {
		t.Fatalf("held view: %+v, reason %q", v.Held, v.Reason)
	}
	base := "http://" + p.Addr()
	var held []projection.HeldRef
	getJSON(t, base+"/api/held", &held)
	if len(held) != 1 || held[0].ID != h.ID || held[0].Zone != zone || len(held[0].Changes) != 2 {
		t.Fatalf("/api/held: %+v", held)
	}
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(page), `data-held="`+h.ID+`"`) || !strings.Contains(string(page), "delete "+name+" A (192.0.2.9)") {
		t.Fatalf("the page does not list the hold with its changes:\n%s", page)
	}

	publish(t, js, events.HeldSubject("bind", zone), &events.HeldDeletes{Provider: "bind", Zone: zone}, "")
	if v := waitStatus(t, p, name, projection.Pending); v.Held != nil {
		t.Fatalf("released, still marked: %+v", v.Held)
	}
	if held := p.Projection().Held(); len(held) != 0 {
		t.Fatalf("released, still listed: %+v", held)
	}
}
