package planner

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
)

// A provider that adjusts desired records (Route53: a CNAME to an ELB
// becomes an alias A and AAAA) is planned from its applier's answer, with
// ownership records for the adjusted types. While no applier answers,
// nothing is planned: the zone backs off and tries again.
func TestAdjustedRecordsArePlanned(t *testing.T) {
	nc, js := startBus(t)
	shop := "shop." + zone
	publish(t, js, events.ZonesSubject("p"), &events.ZoneList{Provider: "p", Zones: []string{zone}, Adjusts: true})
	wanted(t, js, rr(shop, "CNAME", 0, "lb.elb.example"))
	sub := planSub(t, nc)
	failures := adjustFailures.WithLabelValues("p")
	before := testutil.ToFloat64(failures)
	runPlanner(t, js, Config{})
	publishComplete(t, js)

	deadline := time.Now().Add(20 * time.Second)
	for testutil.ToFloat64(failures) == before {
		if time.Now().After(deadline) {
			t.Fatal("no failed adjust request counted while no applier answers")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Fatalf("planned from unadjusted records: %s", m.Data)
	}

	stop, err := events.ServeAdjust(nc, "p", time.Second, func(_ context.Context, eps []events.Endpoint) ([]events.Endpoint, error) {
		var out []events.Endpoint
		for _, e := range eps {
			if e.RecordType == events.RecordTypeCNAME {
				e.RecordType = events.RecordTypeA
				e.ProviderSpecific = []events.ProviderSpecificProperty{{Name: "alias", Value: "true"}}
				aaaa := e
				aaaa.RecordType = events.RecordTypeAAAA
				out = append(out, aaaa)
			}
			out = append(out, e)
		}
		return out, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	p := nextPlan(t, sub)
	var got []string
	for _, c := range p.Changes {
		got = append(got, describe([]events.Change{c}))
	}
	slices.Sort(got)
	res := owned("me", "service/default/web")
	want := []string{"create A shop lb.elb.example", "create AAAA shop lb.elb.example",
		"create TXT aaaa-shop " + res, "create TXT cname-shop " + res}
	if !slices.Equal(got, want) {
		t.Fatalf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range p.Changes {
		if c.New.RecordType == events.RecordTypeA && (len(c.New.ProviderSpecific) != 1 || c.New.ProviderSpecific[0].Value != "true") {
			t.Fatalf("the alias property did not reach the plan: %+v", c.New)
		}
	}
}

// A provider that answers no record at all is broken, not a wish to delete
// everything: the names it was asked about wait, and the records they own
// stay.
func TestEmptyAdjustAnswerDeletesNothing(t *testing.T) {
	nc, js := startBus(t)
	www := "www." + zone
	held(t, js, rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("me", "service/default/web")))
	publish(t, js, events.ZonesSubject("p"), &events.ZoneList{Provider: "p", Zones: []string{zone}, Adjusts: true})
	wanted(t, js, rr(www, "A", 0, "192.0.2.2"))
	stop, err := events.ServeAdjust(nc, "p", time.Second, func(context.Context, []events.Endpoint) ([]events.Endpoint, error) {
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	sub := planSub(t, nc)
	failures := adjustFailures.WithLabelValues("p")
	before := testutil.ToFloat64(failures)
	runPlanner(t, js, Config{})
	publishComplete(t, js)
	deadline := time.Now().Add(20 * time.Second)
	for testutil.ToFloat64(failures) == before {
		if time.Now().After(deadline) {
			t.Fatal("an empty answer was not counted as a failed adjustment")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if m, err := sub.NextMsg(time.Second); err == nil {
		t.Fatalf("planned from an empty answer: %s", m.Data)
	}
}

// A broken webhook answers [] to a request that held a TXT record, and its
// client adds the TXT back: the answer is not empty, but it lost the other
// names. A lost name is not adjusted, never unwanted: nothing of it is
// deleted, it is counted and asked for again, and the names the answer
// held are planned.
func TestAdjustAnswerThatLosesANameDeletesNothing(t *testing.T) {
	nc, js := startBus(t)
	www, api, note := "www."+zone, "api."+zone, "note."+zone
	held(t, js, rr(www, "A", 300, "192.0.2.1"), rr("a-"+www, "TXT", 300, owned("me", "service/default/web")))
	publish(t, js, events.ZonesSubject("p"), &events.ZoneList{Provider: "p", Zones: []string{zone}, Adjusts: true})
	wanted(t, js, rr(www, "A", 300, "192.0.2.1"))
	wanted(t, js, rr(api, "A", 300, "192.0.2.2"))
	wanted(t, js, rr(note, "TXT", 300, "hello"))
	stop, err := events.ServeAdjust(nc, "p", time.Second, func(_ context.Context, eps []events.Endpoint) ([]events.Endpoint, error) {
		var answer []events.Endpoint
		for _, e := range eps {
			// What the webhook client answers when the webhook says []:
			// the TXT records it kept back, and (here) one name the
			// webhook did keep.
			if e.RecordType == events.RecordTypeTXT || e.DNSName == api {
				answer = append(answer, e)
			}
		}
		return answer, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	sub := planSub(t, nc)
	lost := namesLost.WithLabelValues("p")
	before := testutil.ToFloat64(lost)
	runPlanner(t, js, Config{})
	publishComplete(t, js)

	// Every plan is answered as applied, so that the zone is free and
	// only the lost name waits.
	var lines []string
	deadline := time.Now().Add(6 * time.Second)
	for time.Now().Before(deadline) {
		m, err := sub.NextMsg(200 * time.Millisecond)
		if err != nil {
			continue
		}
		var p events.Plan
		if err := events.Unmarshal(m.Header, m.Data, &p); err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Changes {
			if c.Key().DNSName == www || c.Key().DNSName == "a-"+www {
				t.Fatalf("planned a change at a name the adjust answer lost: %v", planLines(p))
			}
		}
		lines = append(lines, planLines(p)...)
		publish(t, js, events.ResultSubject("p", zone), &events.Result{PlanID: p.ID, Provider: "p", Zone: zone,
			Status: events.ResultApplied, Applied: len(p.Changes)})
	}
	if !slices.Contains(lines, "create A api 192.0.2.2") {
		t.Fatalf("the name the answer held was not planned: %v", lines)
	}
	// Asked again after its back-off (1 s, then 2 s), lost again.
	if n := testutil.ToFloat64(lost) - before; n < 2 {
		t.Fatalf("the lost name was counted %v times in 6 s, want it asked for again after its back-off", n)
	}
}

// A lost name that nothing wants any more is not waited for: --once would
// otherwise report it not adjusted for good, and the gauge never fall.
func TestLostNameWantedByNobodyIsForgotten(t *testing.T) {
	_, js := startBus(t)
	s := freshRun(t, js, Config{})
	www := "www." + zone
	s.lost.lose("p", www)
	feed(t, s, events.DesiredSubject(www), &events.DesiredState{DNSName: www})
	if n := s.lost.count(); n != 0 {
		t.Fatalf("%d lost name(s) kept after the name's tombstone, want 0", n)
	}
	if done, err := s.passDone(); done && err != nil && strings.Contains(err.Error(), "not adjusted") {
		t.Fatalf("--once still counts the forgotten name: %v", err)
	}
}
