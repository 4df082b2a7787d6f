package planner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
)

// guarded is a planner state for provider "p" and zone, holding n owned
// A records svc-0 .. svc-(n-1), all wanted, deletes allowed, nothing to
// plan: the start of every guard test. Limits: more than 5 deletes and
// more than 50% of the zone's owned records.
type guarded struct {
	t  *testing.T
	s  *run
	js jetstream.JetStream
}

func newGuarded(t *testing.T, n int) *guarded {
	return newGuardedWith(t, n, Config{MaxDeletes: 5, MaxDeletesPercent: 50})
}

// newGuardedWith is newGuarded with the guard's limits of cfg.
func newGuardedWith(t *testing.T, n int, cfg Config) *guarded {
	_, js := startBus(t)
	g := &guarded{t: t, s: freshRun(t, js, cfg), js: js}
	for i := range n {
		g.observe(i, svcIP(i))
		g.want(i, svcIP(i))
	}
	feed(t, g.s, events.DesiredCompleteSubject(), &events.DesiredComplete{Complete: true, Clusters: []string{"c"}})
	if plans := g.pass(); len(plans) > 0 {
		t.Fatalf("setup: planned %v", plans)
	}
	return g
}

func svcName(i int) string { return fmt.Sprintf("svc-%d.%s", i, zone) }
func svcIP(i int) string   { return fmt.Sprintf("192.0.2.%d", i+1) }
func svcRef(i int) events.ObjectRef {
	return events.ObjectRef{Cluster: "c", Source: "service", Namespace: "default", Name: fmt.Sprintf("svc-%d", i)}
}

// observe: the provider holds svc-i's A record with these targets, and our
// ownership record of it.
func (g *guarded) observe(i int, targets ...string) {
	name := svcName(i)
	feed(g.t, g.s, events.ObservedSubject("p", name), &events.ObservedState{Provider: "p", Zone: zone, DNSName: name,
		Records: []events.Endpoint{rr(name, "A", 300, targets...)}})
	feed(g.t, g.s, events.ObservedSubject("p", "a-"+name), &events.ObservedState{Provider: "p", Zone: zone, DNSName: "a-" + name,
		Records: []events.Endpoint{rr("a-"+name, "TXT", 300, owned("me", svcRef(i).Resource()))}})
}

// want: svc-i's Service wants these targets; none: nothing is wanted.
func (g *guarded) want(i int, targets ...string) {
	name := svcName(i)
	d := &events.DesiredState{DNSName: name}
	if len(targets) > 0 {
		d.Endpoints = []events.Endpoint{rr(name, "A", 0, targets...)}
		d.Contributors = []events.ObjectRef{svcRef(i)}
	}
	feed(g.t, g.s, events.DesiredSubject(name), d)
}

// pass plans once and returns the changes queued, one line each, sorted.
// Each pass starts with the zone free: its earlier plans are taken as
// applied (what a test wants the provider to hold, it observes itself).
func (g *guarded) pass() []string {
	g.t.Helper()
	ctx := context.Background()
	g.s.flights = map[zoneKey]*flight{}
	g.s.plan(ctx)
	var lines []string
	for _, p := range takePlans(g.t, g.js) {
		lines = append(lines, planLines(p)...)
	}
	slices.Sort(lines)
	return lines
}

// held is what the bus says the zone holds.
func (g *guarded) held() events.HeldDeletes {
	g.t.Helper()
	ctx := context.Background()
	st, err := g.js.Stream(ctx, events.StreamHeld)
	if err != nil {
		g.t.Fatal(err)
	}
	var h events.HeldDeletes
	m, err := st.GetLastMsgForSubject(ctx, events.HeldSubject("p", zone))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return h
	}
	if err != nil {
		g.t.Fatal(err)
	}
	if err := events.Decode(events.Received{Subject: m.Subject, Header: m.Header, Data: m.Data}, &h); err != nil {
		g.t.Fatal(err)
	}
	return h
}

// approve feeds an operator's approval of the hold id.
func (g *guarded) approve(id string) {
	feed(g.t, g.s, events.ApprovalSubject("p", zone), &events.Approval{Provider: "p", Zone: zone, HeldID: id, By: "test"})
}

// deleted lists the svc names whose A record lines delete.
func deleted(lines []string) []string {
	var out []string
	for _, l := range lines {
		if name, ok := strings.CutPrefix(l, "delete A "); ok {
			out = append(out, name)
		}
	}
	return out
}

func svcs(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("svc-%d", i))
	}
	slices.Sort(out)
	return out
}

// TestDeletesWithinTheLimitsAreApplied: up to --max-deletes, or beyond it
// up to --max-deletes-percent of the zone's owned records, deletes are
// planned as ever, each record with its ownership record.
func TestDeletesWithinTheLimitsAreApplied(t *testing.T) {
	g := newGuarded(t, 20)
	for i := range 5 {
		g.want(i)
	}
	lines := g.pass()
	if got := deleted(lines); !slices.Equal(got, svcs(0, 5)) || len(lines) != 10 {
		t.Fatalf("5 deletes (the absolute limit) must be planned with their ownership records: %v", lines)
	}
	for i := range 5 {
		feed(t, g.s, events.ObservedSubject("p", svcName(i)), &events.ObservedState{Provider: "p", Zone: zone, DNSName: svcName(i)})
		feed(t, g.s, events.ObservedSubject("p", "a-"+svcName(i)), &events.ObservedState{Provider: "p", Zone: zone, DNSName: "a-" + svcName(i)})
	}
	for i := 5; i < 12; i++ { // 7 of the 15 left: more than 5, under half
		g.want(i)
	}
	if got := deleted(g.pass()); !slices.Equal(got, svcs(5, 12)) {
		t.Fatalf("7 deletes of 15 owned records must be planned: %v", got)
	}
	if h := g.held(); !h.IsTombstone() {
		t.Fatalf("nothing may be held: %+v", h)
	}
}

// TestMassDeleteIsHeldWhileCreatesAndUpdatesGoOn: a pass that would
// delete more than both limits allow deletes nothing; the zone's creates
// and updates (at a held name too) are planned; the hold is on the bus,
// counted and measured.
func TestMassDeleteIsHeldWhileCreatesAndUpdatesGoOn(t *testing.T) {
	g := newGuarded(t, 20)
	before := testutil.ToFloat64(holds.WithLabelValues("p"))
	for i := range 15 {
		g.want(i)
	}
	g.want(19, "192.0.2.199") // an update
	newName := "new." + zone
	feed(t, g.s, events.DesiredSubject(newName), &events.DesiredState{DNSName: newName,
		Endpoints: []events.Endpoint{rr(newName, "A", 0, "192.0.2.200")}})
	// svc-0 also had an AAAA that is still wanted and changes: the name's
	// delete is held, its update is not.
	feed(t, g.s, events.ObservedSubject("p", svcName(0)), &events.ObservedState{Provider: "p", Zone: zone, DNSName: svcName(0),
		Records: []events.Endpoint{rr(svcName(0), "A", 300, svcIP(0)), rr(svcName(0), "AAAA", 300, "2001:db8::1")}})
	feed(t, g.s, events.ObservedSubject("p", "aaaa-"+svcName(0)), &events.ObservedState{Provider: "p", Zone: zone, DNSName: "aaaa-" + svcName(0),
		Records: []events.Endpoint{rr("aaaa-"+svcName(0), "TXT", 300, owned("me", svcRef(0).Resource()))}})
	feed(t, g.s, events.DesiredSubject(svcName(0)), &events.DesiredState{DNSName: svcName(0),
		Endpoints: []events.Endpoint{rr(svcName(0), "AAAA", 0, "2001:db8::2")}, Contributors: []events.ObjectRef{svcRef(0)}})

	lines := g.pass()
	want := []string{"create A new 192.0.2.200", "create TXT a-new " + owned("me", ""),
		"update A svc-19 192.0.2.199", "update AAAA svc-0 2001:db8::2"}
	if !slices.Equal(lines, want) {
		t.Fatalf("with the deletes held, the pass must plan exactly the creates and updates:\n%s\nwant\n%s",
			strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	h := g.held()
	if h.ID == "" || h.Deletes != 15 || h.Owned != 21 || h.MaxDeletes != 5 || h.MaxDeletesPercent != 50 {
		t.Fatalf("held on the bus: id %q, %d deletes of %d owned (limits %d, %d%%)", h.ID, h.Deletes, h.Owned, h.MaxDeletes, h.MaxDeletesPercent)
	}
	if got := deleted(strings.Split(describe(h.Changes), "\n")); !slices.Equal(got, svcs(0, 15)) || len(h.Changes) != 30 {
		t.Fatalf("held changes: %s", describe(h.Changes))
	}
	if testutil.ToFloat64(heldPlans) != 1 || testutil.ToFloat64(holds.WithLabelValues("p")) != before+1 {
		t.Fatalf("metrics: held plans %v, holds %v", testutil.ToFloat64(heldPlans), testutil.ToFloat64(holds.WithLabelValues("p")))
	}
	// More deletes while the zone is held are held too, whatever their number.
	g.want(15)
	if lines := g.pass(); len(lines) > 0 {
		t.Fatalf("a delete in a held zone was planned: %v", lines)
	}
	if h2 := g.held(); h2.Deletes != 16 || h2.ID == h.ID {
		t.Fatalf("the hold must grow to 16 deletes under a new ID: %d, %q", h2.Deletes, h2.ID)
	}
}

// TestFreshPlanWithinTheLimitsReleasesTheHold: once the Services are back
// (a wrong filter corrected), the names held are wanted again; what is
// still to delete is within the limits: it is planned, and the hold is
// cleared.
func TestFreshPlanWithinTheLimitsReleasesTheHold(t *testing.T) {
	g := newGuarded(t, 20)
	for i := range 15 {
		g.want(i)
	}
	g.pass()
	if g.held().Deletes != 15 {
		t.Fatal("setup: nothing held")
	}
	for i := 2; i < 15; i++ {
		g.want(i, svcIP(i))
	}
	if got := deleted(g.pass()); !slices.Equal(got, svcs(0, 2)) {
		t.Fatalf("the two deletes left must be planned: %v", got)
	}
	if h := g.held(); !h.IsTombstone() || len(g.s.holds) != 0 || testutil.ToFloat64(heldPlans) != 0 {
		t.Fatalf("the hold must be cleared: %+v", h)
	}
}

// TestApprovalAppliesOnlyWhatIsStillCurrent: an approval of another hold
// than the zone's lets nothing through; an approval of the zone's hold
// lets through the held deletes that are still what the planner would
// plan, and none whose record changed since: those are counted afresh,
// and held again.
func TestApprovalAppliesOnlyWhatIsStillCurrent(t *testing.T) {
	g := newGuarded(t, 20)
	for i := range 15 {
		g.want(i)
	}
	g.pass()
	id := g.held().ID
	g.approve("0123456789abcdef")
	if lines := g.pass(); len(lines) > 0 {
		t.Fatalf("an approval of another hold let deletes through: %v", lines)
	}
	g.approve(id)
	for i := 3; i < 15; i++ { // changed in DNS after they were held
		g.observe(i, "198.51.100.1")
	}
	lines := g.pass()
	if got := deleted(lines); !slices.Equal(got, svcs(0, 3)) || len(lines) != 6 {
		t.Fatalf("the approval must let through exactly the 3 deletes still current: %v", lines)
	}
	h := g.held()
	if h.Deletes != 12 || h.ID == id {
		t.Fatalf("the 12 changed records must be held anew (12 of 20 owned): %d under %q", h.Deletes, h.ID)
	}
	for _, c := range h.Changes {
		if c.Old.RecordType == "A" && c.Old.Targets[0] != "198.51.100.1" {
			t.Fatalf("held with a stale state: %s", describe([]events.Change{c}))
		}
	}
}

// TestHoldLargerThanAMessageIsPublished: the hold of a zone wipe larger
// than one NATS message is published with the changes that fit and the
// count of the others, under the ID of them all.
func TestHoldLargerThanAMessageIsPublished(t *testing.T) {
	g := newGuarded(t, 12000) // 24000 deletes of some 100 bytes: more than 1 MiB
	for i := range 12000 {
		g.want(i)
	}
	if lines := g.pass(); len(lines) > 0 {
		t.Fatalf("a wipe was planned: %d changes", len(lines))
	}
	h := g.held()
	if h.Deletes != 12000 || h.ChangesOmitted == 0 || len(h.Changes)+h.ChangesOmitted != 24000 {
		t.Fatalf("held on the bus: %d deletes, %d changes listed, %d omitted", h.Deletes, len(h.Changes), h.ChangesOmitted)
	}
	if h.ID != g.s.holds[zoneKey{"p", zone}].id {
		t.Fatal("the message's ID is not the hold's")
	}
}

// takePlans returns the plans queued on the plans stream, in order, and
// purges it: a test's next pass starts from an empty queue.
func takePlans(t *testing.T, js jetstream.JetStream) []events.Plan {
	t.Helper()
	ctx := context.Background()
	st, err := js.Stream(ctx, events.StreamPlans)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var plans []events.Plan
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		var p events.Plan
		if err := events.Unmarshal(m.Header, m.Data, &p); err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	if err := st.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	return plans
}
