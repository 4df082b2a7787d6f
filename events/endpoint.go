package events

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"
	"unicode"
)

// Record types zonestream knows by name. Any other type string passes
// through untouched; these exist so callers don't spell them twice.
const (
	RecordTypeA     = "A"
	RecordTypeAAAA  = "AAAA"
	RecordTypeCNAME = "CNAME"
	RecordTypeTXT   = "TXT"
	RecordTypeSRV   = "SRV"
	RecordTypeNS    = "NS"
	RecordTypeMX    = "MX"
)

// Endpoint is one RRset a user wants or a provider holds: the fields of
// ExternalDNS' endpoint and of the DNSEndpoint CRD (externaldns.k8s.io/v1alpha1),
// so that a DNSEndpoint maps onto it field for field.
type Endpoint struct {
	DNSName          string                     `msgpack:"dnsName" json:"dnsName"`
	RecordType       string                     `msgpack:"recordType" json:"recordType"`
	Targets          []string                   `msgpack:"targets" json:"targets"`
	SetIdentifier    string                     `msgpack:"setIdentifier,omitempty" json:"setIdentifier,omitempty"`
	RecordTTL        int64                      `msgpack:"recordTTL,omitempty" json:"recordTTL,omitempty"`
	Labels           map[string]string          `msgpack:"labels,omitempty" json:"labels,omitempty"`
	ProviderSpecific []ProviderSpecificProperty `msgpack:"providerSpecific,omitempty" json:"providerSpecific,omitempty"`
}

// ProviderSpecificProperty is a provider option attached to an endpoint, as
// in the DNSEndpoint CRD.
type ProviderSpecificProperty struct {
	Name  string `msgpack:"name" json:"name"`
	Value string `msgpack:"value" json:"value"`
}

// RRsetKey identifies an RRset: what a plan creates, updates or deletes as one.
type RRsetKey struct {
	DNSName       string
	RecordType    string
	SetIdentifier string
}

// NewEndpoint builds a normalized endpoint.
func NewEndpoint(dnsName, recordType string, ttl int64, targets ...string) Endpoint {
	ep := Endpoint{DNSName: dnsName, RecordType: recordType, RecordTTL: ttl, Targets: targets}
	ep.Normalize()
	return ep
}

// Key returns the RRset the endpoint describes.
func (e Endpoint) Key() RRsetKey {
	return RRsetKey{DNSName: e.DNSName, RecordType: e.RecordType, SetIdentifier: e.SetIdentifier}
}

// Normalize lower-cases the name, drops its trailing dot, upper-cases the
// type, writes addresses and target names in one canonical form, and sorts
// and de-duplicates the targets, so that equal content has equal bytes and
// equal hashes whoever produced it (a collector or a provider listing).
func (e *Endpoint) Normalize() {
	e.DNSName = NormalizeName(e.DNSName)
	e.RecordType = strings.ToUpper(e.RecordType)
	for i, t := range e.Targets {
		switch e.RecordType {
		case RecordTypeA, RecordTypeAAAA:
			if ip, err := netip.ParseAddr(strings.TrimSpace(t)); err == nil {
				e.Targets[i] = ip.String()
			}
		case RecordTypeCNAME, RecordTypeNS, "PTR", "DNAME":
			e.Targets[i] = NormalizeName(t)
		case RecordTypeSRV, RecordTypeMX:
			// "priority weight port target" / "preference exchange": the
			// name is the last field, with or without its trailing dot.
			if f := strings.Fields(t); len(f) > 1 {
				f[len(f)-1] = NormalizeName(f[len(f)-1])
				e.Targets[i] = strings.Join(f, " ")
			}
		}
	}
	e.Targets = sortedSet(e.Targets)
	slices.SortFunc(e.ProviderSpecific, func(a, b ProviderSpecificProperty) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Value, b.Value))
	})
}

// SameRecords reports whether two endpoints hold the same records: the same
// targets; when want has a TTL configured, the same TTL (an unconfigured
// TTL, 0, leaves the provider's TTL alone, as ExternalDNS does); and the
// same value for each provider-specific property both have (a weight
// changed). A property only one of them has changes nothing: a provider
// that keeps no such property (BIND has none) would otherwise be "changed"
// at every pass.
func SameRecords(want, have Endpoint) bool {
	if want.RecordTTL != 0 && want.RecordTTL != have.RecordTTL {
		return false
	}
	for _, h := range have.ProviderSpecific {
		for _, w := range want.ProviderSpecific {
			if w.Name == h.Name && w.Value != h.Value {
				return false
			}
		}
	}
	return slices.Equal(want.Targets, have.Targets)
}

// CompareEndpoints orders endpoints by name, type, set identifier.
func CompareEndpoints(a, b Endpoint) int {
	return cmp.Or(
		cmp.Compare(a.DNSName, b.DNSName),
		cmp.Compare(a.RecordType, b.RecordType),
		cmp.Compare(a.SetIdentifier, b.SetIdentifier),
	)
}

// SortEndpoints normalizes every endpoint and sorts the slice in place.
func SortEndpoints(eps []Endpoint) {
	for i := range eps {
		eps[i].Normalize()
	}
	slices.SortFunc(eps, CompareEndpoints)
}

// NormalizeName returns a DNS name in the form used everywhere in zonestream:
// lower case, no surrounding spaces, no trailing dot. It is idempotent:
// "foo ." and "foo. ." become "foo" at once, not one step at a time.
func NormalizeName(name string) string {
	name = strings.TrimLeftFunc(strings.ToLower(name), unicode.IsSpace)
	return strings.TrimRightFunc(name, func(r rune) bool { return r == '.' || unicode.IsSpace(r) })
}

// sortedSet sorts s in place and drops repeats: the canonical form of a
// set of strings on the wire.
func sortedSet(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
