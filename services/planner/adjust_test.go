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
