package source

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// TargetNets is --target-net-filter and --exclude-target-net, as
// ExternalDNS' target filter: with filter networks, only addresses in one
// of them stay (a hostname is in none); an address in an excluded network
// goes; an endpoint left with no target goes.
type TargetNets struct {
	include, exclude []netip.Prefix
}

// ParseTargetNets reads the networks (CIDRs); a bad one is an error, where
// ExternalDNS would log it and filter without it.
func ParseTargetNets(include, exclude []string) (TargetNets, error) {
	var f TargetNets
	var err error
	if f.include, err = parsePrefixes("--target-net-filter", include); err != nil {
		return f, err
	}
	f.exclude, err = parsePrefixes("--exclude-target-net", exclude)
	return f, err
}

func parsePrefixes(flag string, cidrs []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return nil, fmt.Errorf("%s %q: not a network (CIDR): %w", flag, c, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Filter keeps the targets the networks let through.
func (f TargetNets) Filter(eps []events.Endpoint) []events.Endpoint {
	if len(f.include) == 0 && len(f.exclude) == 0 {
		return eps
	}
	out := make([]events.Endpoint, 0, len(eps)) // the source's slice is left as it is
	for _, ep := range eps {
		var kept []string
		for _, t := range ep.Targets {
			if f.match(t) {
				kept = append(kept, t)
			}
		}
		if len(kept) > 0 {
			ep.Targets = kept
			out = append(out, ep)
		}
	}
	return out
}

func (f TargetNets) match(target string) bool {
	addr, err := netip.ParseAddr(target)
	in := func(nets []netip.Prefix) bool {
		for _, n := range nets {
			if err == nil && n.Contains(addr.Unmap()) {
				return true
			}
		}
		return false
	}
	return (len(f.include) == 0 || in(f.include)) && !in(f.exclude)
}
