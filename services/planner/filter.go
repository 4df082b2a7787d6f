package planner

import (
	"strings"

	"github.com/zonestream/zonestream/events"
)

// domainFilter is ExternalDNS' --domain-filter / --exclude-domains: a name
// matches "example.com" if it is example.com or under it, and
// ".example.com" if it is strictly under it. No includes match everything.
type domainFilter struct {
	include, exclude []string
}

func newDomainFilter(include, exclude []string) domainFilter {
	norm := func(in []string) []string {
		out := make([]string, 0, len(in))
		for _, d := range in {
			if d = events.NormalizeName(d); d != "" {
				out = append(out, d)
			}
		}
		return out
	}
	return domainFilter{include: norm(include), exclude: norm(exclude)}
}

func (f domainFilter) match(name string) bool {
	for _, d := range f.exclude {
		if matchDomain(name, d) {
			return false
		}
	}
	if len(f.include) == 0 {
		return true
	}
	for _, d := range f.include {
		if matchDomain(name, d) {
			return true
		}
	}
	return false
}

func matchDomain(name, domain string) bool {
	if strings.HasPrefix(domain, ".") {
		return strings.HasSuffix(name, domain)
	}
	return name == domain || strings.HasSuffix(name, "."+domain)
}

// zoneOf returns the longest of zones that name lies in.
func zoneOf(name string, zones []string) (string, bool) {
	best := ""
	for _, z := range zones {
		if matchDomain(name, z) && len(z) > len(best) {
			best = z
		}
	}
	return best, best != ""
}
