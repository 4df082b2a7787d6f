package planner

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// domainFilter is ExternalDNS' --domain-filter / --exclude-domains: a name
// matches "example.com" if it is example.com or under it, and
// ".example.com" if it is strictly under it. No includes match everything.
// With --regex-domain-filter or --regex-domain-exclusion set, as in
// ExternalDNS' DomainFilter, the regular expressions replace the plain
// lists: a name matches if it does not match the exclusion and matches the
// filter (an empty filter matches everything). Expressions are unanchored
// Go regexps matched against the name, lower case, without trailing dot.
type domainFilter struct {
	include, exclude []string
	regex, regexExcl *regexp.Regexp
}

func newDomainFilter(include, exclude []string, regex, regexExclusion string) (domainFilter, error) {
	f := newPlainDomainFilter(include, exclude)
	var err error
	if regex != "" {
		if f.regex, err = regexp.Compile(regex); err != nil {
			return f, fmt.Errorf("--regex-domain-filter: %w", err)
		}
	}
	if regexExclusion != "" {
		if f.regexExcl, err = regexp.Compile(regexExclusion); err != nil {
			return f, fmt.Errorf("--regex-domain-exclusion: %w", err)
		}
	}
	return f, nil
}

func newPlainDomainFilter(include, exclude []string) domainFilter {
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
	if f.regex != nil || f.regexExcl != nil {
		name = strings.ToLower(strings.TrimSuffix(name, "."))
		if f.regexExcl != nil && f.regexExcl.MatchString(name) {
			return false
		}
		return f.regex == nil || f.regex.MatchString(name)
	}
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
