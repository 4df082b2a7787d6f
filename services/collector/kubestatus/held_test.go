package kubestatus

import (
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

// TestHeldDeletesTellTheirObjects: a hold of the mass-delete guard makes
// one DeleteHeld Warning on each object of this cluster whose ownership
// records are among the held deletes, and none on another collector's.
func TestHeldDeletesTellTheirObjects(t *testing.T) {
	b := newBook(func(o events.ObjectRef) bool { return o.Cluster == "eu" && o.Source == "crd" }, registry.Settings{OwnerID: "me"})
	b.cluster = "eu"
	del := func(ep events.Endpoint) events.Change { return events.Change{Old: &ep} }
	h := &events.HeldDeletes{ID: "abc", Provider: "bind", Zone: "example.org", Deletes: 2, Owned: 2, MaxDeletes: 1,
		Changes: []events.Change{
			del(a("web.example.org", "192.0.2.1")),
			del(txt("a-web.example.org", "heritage=external-dns,external-dns/owner=me,external-dns/resource=crd/default/web")),
			del(txt("aaaa-web.example.org", "heritage=external-dns,external-dns/owner=me,external-dns/resource=crd/default/web")),
			del(txt("a-rival.example.org", "heritage=external-dns,external-dns/owner=me,external-dns/resource=service/default/rival")),
		}}
	ts := b.heldTransitions(h)
	if len(ts) != 1 || ts[0].Object != web || ts[0].Name != "example.org" {
		t.Fatalf("want one transition of %v: %+v", web, ts)
	}
	warning, reason, _, ok := EventOf(ts[0].To)
	if !ok || !warning || reason != EventDeleteHeld || !newsworthy(ts[0]) {
		t.Fatalf("not a DeleteHeld Warning: %v %v %q", ok, warning, reason)
	}
	if got := b.heldTransitions(&events.HeldDeletes{Provider: "bind", Zone: "example.org"}); len(got) != 0 {
		t.Fatalf("a released hold is no news: %+v", got)
	}
}
