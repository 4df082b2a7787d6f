package source

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// NAT64 is --nat64-networks, as ExternalDNS' NAT64 source: an AAAA target
// in one of the /96 networks also gives an A record of the IPv4 address it
// embeds (its last 32 bits), at the same name.
type NAT64 []netip.Prefix

// ParseNAT64 reads the networks; each must be a /96.
func ParseNAT64(cidrs []string) (NAT64, error) {
	var out NAT64
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil || !p.Addr().Is6() || p.Bits() != 96 {
			return nil, fmt.Errorf("--nat64-networks %q: not an IPv6 /96 network", c)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Add adds the A records the AAAA targets in the networks embed, merged
// into an A record the object already has at the name. It works on a copy:
// eps is the source's, which may keep it.
func (n NAT64) Add(eps []events.Endpoint) []events.Endpoint {
	if len(n) == 0 {
		return eps
	}
	eps = slices.Clone(eps)
	for _, ep := range eps {
		if ep.RecordType != events.RecordTypeAAAA {
			continue
		}
		var v4 []string
		for _, t := range ep.Targets {
			addr, err := netip.ParseAddr(t)
			if err != nil || !slices.ContainsFunc(n, func(p netip.Prefix) bool { return p.Contains(addr) }) {
				continue
			}
			b := addr.As16()
			v4 = append(v4, netip.AddrFrom4([4]byte(b[12:16])).String())
		}
		if len(v4) == 0 {
			continue
		}
		i := slices.IndexFunc(eps, func(e events.Endpoint) bool {
			return e.RecordType == events.RecordTypeA && e.DNSName == ep.DNSName && e.SetIdentifier == ep.SetIdentifier
		})
		if i >= 0 {
			eps[i].Targets = append(slices.Clone(eps[i].Targets), v4...)
			eps[i].Normalize()
			continue
		}
		a := ep
		a.RecordType, a.Targets, a.Labels = events.RecordTypeA, v4, nil
		a.ProviderSpecific = slices.Clone(ep.ProviderSpecific)
		a.Normalize()
		eps = append(eps, a)
	}
	return eps
}
