package planner

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zonestream/zonestream/stage"
)

// ownerMismatches is ExternalDNS' (v0.20 on)
// external_dns_registry_skipped_records_owner_mismatch_per_sync: records
// the objects want that are left alone because another owner holds them
// (or records are there that no ownership record covers), by record type,
// our owner ID, the other owner (empty when none is named) and the apex
// domain (its last two labels, as ExternalDNS: not the name, to bound the
// series). ExternalDNS counts them afresh at each loop; the planner keeps
// each planned name's share, replaced whenever the name is planned again,
// so the gauge is what a loop over everything would count now.
//
// ExternalDNS' plan package, which the externaldns build links, registers
// the same name at its start: the gauge is registered when a planner is
// made (stage.Adopted).
var ownerMismatches = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "external_dns_registry_skipped_records_owner_mismatch_per_sync",
	Help: "Number of records skipped with owner mismatch for each record type, owner mismatch ID and domain (vector).",
}, []string{"record_type", "owner", "foreign_owner", "domain"})

var registerOwnerMismatches = sync.OnceFunc(func() { ownerMismatches = stage.Adopted(ownerMismatches) })

// ownerMismatch is one wanted record left alone for its owner.
type ownerMismatch struct {
	recordType, owner, foreignOwner string
}

type mismatchKey struct{ provider, name string }

// recountMismatches replaces name's share of ownerMismatches at provider
// with now.
func (r *run) recountMismatches(provider, name string, now []ownerMismatch) {
	k := mismatchKey{provider, name}
	domain := nakedDomain(name)
	for _, m := range r.mismatches[k] {
		ownerMismatches.WithLabelValues(m.recordType, m.owner, m.foreignOwner, domain).Dec()
	}
	for _, m := range now {
		ownerMismatches.WithLabelValues(m.recordType, m.owner, m.foreignOwner, domain).Inc()
	}
	if len(now) == 0 {
		delete(r.mismatches, k)
	} else {
		r.mismatches[k] = now
	}
}

// nakedDomain is ExternalDNS' Endpoint.GetNakedDomain: the last two
// labels of name.
func nakedDomain(name string) string {
	name = strings.TrimSuffix(name, ".")
	labels := strings.Split(name, ".")
	if len(labels) <= 2 {
		return name
	}
	return strings.Join(labels[len(labels)-2:], ".")
}
