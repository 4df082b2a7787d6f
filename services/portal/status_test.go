package portal_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/domains"
	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/services/portal"
	"github.com/zonestream/zonestream/services/portal/projection"
	"github.com/zonestream/zonestream/testenv/bind"
)

const zone = "portal.test"

// TestStatusRules drives a portal with events on a real JetStream and
// checks every status, DNS answers coming from a real BIND.
func TestStatusRules(t *testing.T) {
	js := bus(t)
	ns := bind.StartT(t, zone)
	p := start(t, js, portal.Config{Resolver: ns.Addr, DNSWorkers: 2, DNSTimeout: time.Second,
		DNSInterval: time.Second, Grace: time.Second, Ownership: registry.Settings{OwnerID: "us"}, Domains: domains.Settings{Exclude: []string{"internal." + zone}}})
	publish(t, js, events.ZonesSubject("bind"), &events.ZoneList{Provider: "bind", Zones: []string{zone}}, "")

	t.Run("wanted, not held: pending, then in sync once held and answered", func(t *testing.T) {
		name := "web." + zone
		publish(t, js, events.DesiredSubject(name), desired(name, shopWeb, a(name, "192.0.2.1")), "")
		// The zone list and the desired state come on two streams, in no
		// order between them: the zone may be known a moment later.
		var v projection.View
		waitFor(t, name+" pending in its zone", func() bool {
			v, _ = p.Projection().Get(name)
			return v.Status == projection.Pending && v.Zone == zone
		})
		if len(v.Desired.Contributors) != 1 || v.Desired.Contributors[0] != shopWeb {
			t.Fatalf("view %+v: want zone %s, wanted by %v", v, zone, shopWeb)
		}
		plant(t, ns, name+". 300 IN A 192.0.2.1")
		publish(t, js, events.ObservedSubject("bind", name), observed("bind", zone, name, a(name, "192.0.2.1")), "")
		publish(t, js, events.ObservedSubject("bind", "a-"+name), observed("bind", zone, "a-"+name, ownership(name, "us")), "")
		v = waitStatus(t, p, name, projection.InSync)
		if got := v.Check.Answers["A"]; len(got) != 1 || got[0] != "192.0.2.1" {
			t.Fatalf("DNS answers %v, want A 192.0.2.1", v.Check.Answers)
		}
	})
	t.Run("held but DNS answers something else past the grace: not in sync", func(t *testing.T) {
		name := "stale." + zone
		publish(t, js, events.DesiredSubject(name), desired(name, shopWeb, a(name, "192.0.2.2")), "")
		publish(t, js, events.ObservedSubject("bind", name), observed("bind", zone, name, a(name, "192.0.2.2")), "")
		publish(t, js, events.ObservedSubject("bind", "a-"+name), observed("bind", zone, "a-"+name, ownership(name, "us")), "")
		v := waitStatus(t, p, name, projection.NotInSync)
		if !strings.Contains(v.Reason, "DNS answers nothing") {
			t.Fatalf("reason %q, want DNS answers nothing", v.Reason)
		}
		waitFor(t, "consecutive check failures to be counted", func() bool {
			v, _ := p.Projection().Get(name)
			return v.CheckFailures >= 2
		})
	})
	t.Run("plans failing: failed, with the provider's error and the failures counted", func(t *testing.T) {
		name := "fail." + zone
		want := a(name, "192.0.2.3")
		cause := publish(t, js, events.DesiredSubject(name), desired(name, shopWeb, want), "")
		waitStatus(t, p, name, projection.Pending)
		for i := range 2 {
			plan := &events.Plan{ID: "plan-" + string(rune('a'+i)), Provider: "bind", Zone: zone,
				Changes: []events.Change{{New: &want}}}
			planEvent := publish(t, js, events.PlanSubject("bind", zone), plan, cause)
			waitFor(t, "the plan to be seen", func() bool {
				v, _ := p.Projection().Get(name)
				return v.Plan != nil && v.Plan.ID == plan.ID
			})
			publish(t, js, events.ResultSubject("bind", zone), &events.Result{PlanID: plan.ID, Provider: "bind", Zone: zone,
				Status: events.ResultFailed, Error: "REFUSED by the server"}, planEvent)
			v := waitStatus(t, p, name, projection.Failed)
			waitFor(t, "the failure to be counted", func() bool {
				v, _ = p.Projection().Get(name)
				return v.PlanFailures == i+1
			})
			if !strings.Contains(v.Reason, "REFUSED by the server") {
				t.Fatalf("reason %q, want the provider's error", v.Reason)
			}
		}
	})
	t.Run("no zone holds the name: not managed", func(t *testing.T) {
		name := "www.elsewhere.example"
		publish(t, js, events.DesiredSubject(name), desired(name, shopWeb, a(name, "192.0.2.4")), "")
		v := waitStatus(t, p, name, projection.NotManaged)
		if !strings.Contains(v.Reason, "no provider manages a zone") {
			t.Fatalf("reason %q", v.Reason)
		}
	})
	t.Run("left out by the planner's domain filters: not managed, with the filter", func(t *testing.T) {
		name := "db.internal." + zone
		publish(t, js, events.DesiredSubject(name), desired(name, shopWeb, a(name, "192.0.2.10")), "")
		v := waitStatus(t, p, name, projection.NotManaged)
		if !strings.Contains(v.Reason, "excluded by --exclude-domains internal."+zone) {
			t.Fatalf("reason %q", v.Reason)
		}
	})
	t.Run("another owner's records: not managed, with the owner", func(t *testing.T) {
		name := "theirs." + zone
		publish(t, js, events.ObservedSubject("bind", name), observed("bind", zone, name, a(name, "192.0.2.9")), "")
		publish(t, js, events.ObservedSubject("bind", "a-"+name), observed("bind", zone, "a-"+name, ownership(name, "them")), "")
		publish(t, js, events.DesiredSubject(name), desired(name, shopWeb, a(name, "192.0.2.5")), "")
		// Observed and desired state come on separate streams, so the
		// portal may first see the A record without its ownership record
		// ("no ownership record"); the owner must be named once both are in.
		waitFor(t, "the other owner to be named", func() bool {
			v, _ := p.Projection().Get(name)
			return v.Status == projection.NotManaged && strings.Contains(v.Reason, `"them"`)
		})
	})
	t.Run("records nobody marked as ours: not managed", func(t *testing.T) {
		name := "legacy." + zone
		publish(t, js, events.ObservedSubject("bind", name), observed("bind", zone, name, a(name, "192.0.2.99")), "")
		publish(t, js, events.DesiredSubject(name), desired(name, shopWeb, a(name, "192.0.2.6")), "")
		v := waitStatus(t, p, name, projection.NotManaged)
		if !strings.Contains(v.Reason, "no ownership record") {
			t.Fatalf("reason %q", v.Reason)
		}
	})
}

// TestStatusMetrics: names per status, and the time DNS took to answer.
func TestStatusMetrics(t *testing.T) {
	js := bus(t)
	ns := bind.StartT(t, zone)
	start(t, js, portal.Config{Resolver: ns.Addr, DNSWorkers: 1, DNSTimeout: time.Second, DNSInterval: time.Minute, Grace: time.Minute})
	publish(t, js, events.ZonesSubject("bind"), &events.ZoneList{Provider: "bind", Zones: []string{zone}}, "")
	name := "metrics." + zone
	publish(t, js, events.DesiredSubject(name), desired(name, shopWeb, a(name, "192.0.2.11")), "")
	waitFor(t, "a name pending and a DNS answer timed", func() bool {
		return metric(t, "zonestream_portal_names", `status="pending"`) >= 1 &&
			metric(t, "zonestream_portal_resolve_seconds", "") >= 1
	})
}

// metric is the value of a gauge, or the sample count of a histogram,
// whose labels include label.
func metric(t *testing.T, name, label string) float64 {
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := ""
			for _, l := range m.GetLabel() {
				labels += l.GetName() + `="` + l.GetValue() + `" `
			}
			if !strings.Contains(labels, label) {
				continue
			}
			if h := m.GetHistogram(); h != nil {
				return float64(h.GetSampleCount())
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

// TestStatusNotAnswering points the portal at a DNS server that never
// answers.
func TestStatusNotAnswering(t *testing.T) {
	js := bus(t)
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	p := start(t, js, portal.Config{Resolver: silent.LocalAddr().String(), DNSWorkers: 1,
		DNSTimeout: 100 * time.Millisecond, DNSInterval: time.Second, Grace: time.Second})
	publish(t, js, events.ZonesSubject("bind"), &events.ZoneList{Provider: "bind", Zones: []string{zone}}, "")
	name := "quiet." + zone
	publish(t, js, events.DesiredSubject(name), desired(name, shopWeb, a(name, "192.0.2.7")), "")
	publish(t, js, events.ObservedSubject("bind", name), observed("bind", zone, name, a(name, "192.0.2.7")), "")
	publish(t, js, events.ObservedSubject("bind", "a-"+name), observed("bind", zone, "a-"+name, ownership(name, "default")), "")
	v := waitStatus(t, p, name, projection.NotAnswering)
	if !strings.Contains(v.Reason, "timeout") {
		t.Fatalf("reason %q, want a timeout", v.Reason)
	}
}

func plant(t *testing.T, s *bind.Server, record string) {
	t.Helper()
	rr, err := dns.NewRR(record)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(zone, []dns.RR{rr}, nil); err != nil {
		t.Fatal(err)
	}
}
