package planner

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/zonestream/zonestream/events"
)

// verifiedRecords is ExternalDNS' external_dns_controller_verified_records
// (v0.21, v0.22): of the records the objects want, those a provider holds
// at the same name and type, whoever owns them, by type. ExternalDNS
// counts them at each loop from its source and registry; the planner, from
// the desired and observed states it follows, keeps each name's share as
// either changes.
var verifiedRecords = promauto.NewGaugeVec(prometheus.GaugeOpts{
	Name: "external_dns_controller_verified_records",
	Help: "Number of DNS records that exists both in source and registry (vector).",
}, []string{"record_type"})

// verifiedByType are the gauges of ExternalDNS up to v0.17, one per type,
// which dashboards made then still read: the same count as
// verifiedRecords for A and AAAA.
var verifiedByType = map[string]prometheus.Gauge{
	events.RecordTypeA: promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_controller_verified_a_records",
		Help: "Number of DNS A-records that exists both in source and registry."}),
	events.RecordTypeAAAA: promauto.NewGauge(prometheus.GaugeOpts{
		Name: "external_dns_controller_verified_aaaa_records",
		Help: "Number of DNS AAAA-records that exists both in source and registry."}),
}

// addVerified adds n records of typ to the gauges.
func addVerified(typ string, n int) {
	verifiedRecords.WithLabelValues(typ).Add(float64(n))
	if g, ok := verifiedByType[typ]; ok {
		g.Add(float64(n))
	}
}

// verifiedByName is each name's share of verifiedRecords: wanted records
// held, one per endpoint. A slice, not a map per name: a name has one or
// two, and there is one such share per name.
type verifiedByName map[string][]string

// recountVerified brings name's share of verifiedRecords up to date.
func (r *run) recountVerified(name string) {
	var now []string
	if d, ok := r.desired[name]; ok {
		for _, ep := range d.endpoints {
			if r.heldAnywhere(name, ep.RecordType) {
				now = append(now, ep.RecordType)
			}
		}
	}
	for _, typ := range r.verified[name] {
		addVerified(typ, -1)
	}
	for _, typ := range now {
		addVerified(typ, 1)
	}
	if len(now) == 0 {
		delete(r.verified, name)
	} else {
		r.verified[name] = now
	}
}

// heldAnywhere reports whether some provider holds records of type at name.
func (r *run) heldAnywhere(name, typ string) bool {
	for _, byName := range r.observed {
		for _, rec := range byName[name].records {
			if rec.RecordType == typ {
				return true
			}
		}
	}
	return false
}

// forgetVerified takes this run's shares out of verifiedRecords.
func (r *run) forgetVerified() {
	for _, types := range r.verified {
		for _, typ := range types {
			addVerified(typ, -1)
		}
	}
	clear(r.verified)
}
