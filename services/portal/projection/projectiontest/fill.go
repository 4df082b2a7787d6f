// Package projectiontest fills a projection with many names, for
// benchmarks: each name wanted by one Service, held by the provider with
// its ownership record, written by one plan whose result is known.
package projectiontest

import (
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/portal/projection"
)

// Zones are the zones the names are spread over.
var Zones = []string{"a.example", "b.example", "c.example", "d.example"}

// Fill adds n names to p. It panics on a bad event: the events are ours.
func Fill(p *projection.Projection, n int) {
	seq := uint64(0)
	take := func(apply func(events.Received) error, subject string, ev events.Event, cause string) string {
		msg, err := events.Message(subject, ev, cause)
		if err != nil {
			panic(err)
		}
		seq++
		r := events.Received{Subject: subject, Header: fromTheWire(msg.Header), Data: msg.Data, Seq: seq, Time: time.Now()}
		if err := apply(r); err != nil {
			panic(err)
		}
		return r.EventID()
	}
	take(p.ApplyObserved, events.ZonesSubject("bind"), &events.ZoneList{Provider: "bind", Zones: Zones}, "")
	for i := range n {
		zone := Zones[i%len(Zones)]
		name := fmt.Sprintf("svc-%d.%s", i, zone)
		obj := events.ObjectRef{Cluster: "prod", Source: "service", Namespace: fmt.Sprintf("team-%d", i%50), Name: fmt.Sprintf("svc-%d", i)}
		ep := events.NewEndpoint(name, events.RecordTypeA, 300, fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
		txt := events.NewEndpoint("a-"+name, events.RecordTypeTXT, 300,
			"heritage=external-dns,external-dns/owner=default,external-dns/resource=service/"+obj.Namespace+"/"+obj.Name)
		des := take(p.ApplyDesired, events.DesiredSubject(name),
			&events.DesiredState{DNSName: name, Endpoints: []events.Endpoint{ep}, Contributors: []events.ObjectRef{obj}}, "")
		plan := &events.Plan{ID: fmt.Sprintf("plan-%d", i), Provider: "bind", Zone: zone,
			Changes: []events.Change{{New: &ep}, {New: &txt}}}
		pe := take(p.ApplyPlan, events.PlanSubject("bind", zone), plan, des)
		take(p.ApplyObserved, events.ObservedSubject("bind", name),
			&events.ObservedState{Provider: "bind", Zone: zone, DNSName: name, Records: []events.Endpoint{ep}}, pe)
		take(p.ApplyObserved, events.ObservedSubject("bind", txt.DNSName),
			&events.ObservedState{Provider: "bind", Zone: zone, DNSName: txt.DNSName, Records: []events.Endpoint{txt}}, pe)
		take(p.ApplyResult, events.ResultSubject("bind", zone),
			&events.Result{PlanID: plan.ID, Provider: "bind", Zone: zone, Status: events.ResultApplied, Applied: 2}, pe)
	}
}

// fromTheWire is h as a subscriber gets it: nats.go decodes a header block
// into one string that every key and value is a part of, so that keeping
// one value keeps the whole block.
func fromTheWire(h nats.Header) nats.Header {
	var b strings.Builder
	b.WriteString("NATS/1.0\r\n")
	for k, vs := range h {
		for _, v := range vs {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	b.WriteString("\r\n")
	decoded, err := nats.DecodeHeadersMsg([]byte(b.String()))
	if err != nil {
		panic(err)
	}
	return decoded
}
