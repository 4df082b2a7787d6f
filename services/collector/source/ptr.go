package source

import (
	"errors"
	"slices"
	"strings"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
)

// AnnotationRecordType is ExternalDNS v0.22's record-type annotation: "ptr"
// asks for the PTR records of an object's A and AAAA records, "" (empty)
// for none, whatever --create-ptr says. It travels as the endpoint
// property PropertyRecordType (a DNSEndpoint entry may set it itself), and
// the collector takes it off before publishing.
const (
	AnnotationRecordType = "record-type"
	PropertyRecordType   = "record-type"
)

// PTR is --create-ptr with PTR in --managed-record-types, as ExternalDNS
// v0.22's PTR source: an A or AAAA record (not a wildcard) whose object
// asks for it, or every one with --create-ptr, also gives the PTR record
// of each of its addresses, naming it. The records of one object at one
// address make one PTR record set (the lowest TTL); ExternalDNS also
// merges those of several objects, which zonestream's dedup stage leaves to
// one object, as it does every record set.
type PTR struct {
	managed, create bool
}

// ParsePTR reads the flags: --create-ptr needs PTR managed, as ExternalDNS
// requires.
func ParsePTR(create bool, managedTypes []string) (PTR, error) {
	managed := slices.ContainsFunc(managedTypes, func(t string) bool { return strings.EqualFold(strings.TrimSpace(t), "PTR") })
	if create && !managed {
		return PTR{}, errors.New("--create-ptr requires PTR in --managed-record-types")
	}
	return PTR{managed: managed, create: create}, nil
}

// Apply takes the record-type property off every endpoint and adds the
// PTR records asked for. The source's slice is left as it is.
func (p PTR) Apply(eps []events.Endpoint) []events.Endpoint {
	if !slices.ContainsFunc(eps, hasRecordType) && !p.create {
		return eps
	}
	out := make([]events.Endpoint, 0, len(eps))
	type reverse struct {
		names []string
		ttl   int64
	}
	byAddr := map[string]*reverse{}
	var order []string
	for _, ep := range eps {
		asked, set := recordType(ep)
		if set {
			ep.ProviderSpecific = slices.DeleteFunc(slices.Clone(ep.ProviderSpecific),
				func(pp events.ProviderSpecificProperty) bool { return pp.Name == PropertyRecordType })
			if len(ep.ProviderSpecific) == 0 {
				ep.ProviderSpecific = nil
			}
		}
		out = append(out, ep)
		wants := p.create
		if set {
			wants = strings.EqualFold(asked, "PTR")
		}
		if !p.managed || !wants || (ep.RecordType != events.RecordTypeA && ep.RecordType != events.RecordTypeAAAA) ||
			strings.HasPrefix(ep.DNSName, "*.") {
			continue
		}
		for _, addr := range ep.Targets {
			r, ok := byAddr[addr]
			if !ok {
				r = &reverse{ttl: ep.RecordTTL}
				byAddr[addr] = r
				order = append(order, addr)
			}
			r.names = append(r.names, ep.DNSName)
			r.ttl = min(r.ttl, ep.RecordTTL)
		}
	}
	for _, addr := range order {
		name, err := dns.ReverseAddr(addr)
		if err != nil {
			continue // not an address: no A or AAAA record holds it
		}
		out = append(out, events.NewEndpoint(name, "PTR", byAddr[addr].ttl, byAddr[addr].names...))
	}
	slices.SortStableFunc(out, events.CompareEndpoints)
	return out
}

func hasRecordType(ep events.Endpoint) bool { _, ok := recordType(ep); return ok }

// recordType is the endpoint's record-type property, if it has one.
func recordType(ep events.Endpoint) (string, bool) {
	for _, pp := range ep.ProviderSpecific {
		if pp.Name == PropertyRecordType {
			return strings.TrimSpace(pp.Value), true
		}
	}
	return "", false
}
