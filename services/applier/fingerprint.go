package applier

import (
	"maps"
	"slices"
	"strconv"

	"github.com/cespare/xxhash/v2"

	"github.com/zonestream/zonestream/events"
)

// At rest a listing returns what the last one returned. Encoding every
// name's observed state only to find its hash unchanged was half of what
// an idle all-in-one spent (5000 names: 70 of the 140 ms sampled in an idle minute). A fingerprint
// of the whole listing, taken without encoding or allocating, says the
// same in well under a millisecond.

var separator = []byte{0}

// listingFingerprint hashes every field of eps, in order, and the zones
// that decide which of them belong to a zone.
func listingFingerprint(eps []events.Endpoint, zones []string) uint64 {
	d := xxhash.New()
	var num [20]byte
	field := func(s string) {
		_, _ = d.WriteString(s)
		_, _ = d.Write(separator)
	}
	count := func(n int64) { field(string(strconv.AppendInt(num[:0], n, 10))) }
	for _, z := range zones {
		field(z)
	}
	field("")
	for _, ep := range eps {
		field(ep.DNSName)
		field(ep.RecordType)
		field(ep.SetIdentifier)
		count(ep.RecordTTL)
		count(int64(len(ep.Targets)))
		for _, t := range ep.Targets {
			field(t)
		}
		count(int64(len(ep.Labels)))
		for _, k := range slices.Sorted(maps.Keys(ep.Labels)) {
			field(k)
			field(ep.Labels[k])
		}
		count(int64(len(ep.ProviderSpecific)))
		for _, p := range ep.ProviderSpecific {
			field(p.Name)
			field(p.Value)
		}
	}
	return d.Sum64()
}
