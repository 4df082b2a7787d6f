// Package domains is ExternalDNS' domain filter, in one place:
// --domain-filter, --exclude-domains, --regex-domain-filter and
// --regex-domain-exclusion. The planner plans only the names it admits,
// the portal says why it leaves a name out, and the webhook server
// negotiates and serves only what it admits: all of them through this
// package, so that they cannot disagree on a name.
//
// It lives beside events rather than in a service because services share
// only events and stage, and it is part of no stream's contract.
package domains

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// Settings are the filter's flags, as ExternalDNS takes them.
type Settings struct {
	Include        []string // --domain-filter
	Exclude        []string // --exclude-domains
	Regex          string   // --regex-domain-filter
	RegexExclusion string   // --regex-domain-exclusion
}

// Filter is Settings compiled. A name matches "example.com" if it is
// example.com or under it, and ".example.com" if it is strictly under it;
// no includes match everything. With a regular expression set, as in
// ExternalDNS, the expressions replace the plain lists: a name matches if
// it does not match the exclusion and matches the filter (an empty filter
// matches everything). Expressions are unanchored Go regexps matched
// against the name, lower case, without trailing dot. The zero Filter
// admits every name.
type Filter struct {
	settings         Settings
	include, exclude []string
	regex, regexExcl *regexp.Regexp
}

// New compiles s; an expression that does not compile is an error naming
// its flag.
func New(s Settings) (Filter, error) {
	f := Filter{settings: s, include: normalize(s.Include), exclude: normalize(s.Exclude)}
	var err error
	if s.Regex != "" {
		if f.regex, err = regexp.Compile(s.Regex); err != nil {
			return Filter{}, fmt.Errorf("--regex-domain-filter: %w", err)
		}
	}
	if s.RegexExclusion != "" {
		if f.regexExcl, err = regexp.Compile(s.RegexExclusion); err != nil {
			return Filter{}, fmt.Errorf("--regex-domain-exclusion: %w", err)
		}
	}
	return f, nil
}

func normalize(in []string) []string {
	out := make([]string, 0, len(in))
	for _, d := range in {
		if d = events.NormalizeName(d); d != "" {
			out = append(out, d)
		}
	}
	return out
}

// Settings returns what f was compiled from.
func (f Filter) Settings() Settings { return f.settings }

// Empty reports whether f admits every name.
func (f Filter) Empty() bool {
	return len(f.include) == 0 && len(f.exclude) == 0 && f.regex == nil && f.regexExcl == nil
}

// Match reports whether f admits name.
func (f Filter) Match(name string) bool {
	flag, _ := f.leftOutBy(events.NormalizeName(name))
	return flag == ""
}

// Reason says why f leaves name out, naming the flag and its value; "" when
// it admits name.
func (f Filter) Reason(name string) string {
	flag, value := f.leftOutBy(events.NormalizeName(name))
	switch flag {
	case "":
		return ""
	case "--domain-filter", "--regex-domain-filter":
		return "outside " + flag + " " + value
	}
	return "excluded by " + flag + " " + value
}

// leftOutBy returns the flag that leaves name out and its value, or "".
func (f Filter) leftOutBy(name string) (flag, value string) {
	if f.regex != nil || f.regexExcl != nil {
		switch {
		case f.regexExcl != nil && f.regexExcl.MatchString(name):
			return "--regex-domain-exclusion", f.settings.RegexExclusion
		case f.regex != nil && !f.regex.MatchString(name):
			return "--regex-domain-filter", f.settings.Regex
		}
		return "", ""
	}
	for _, d := range f.exclude {
		if Within(name, d) {
			return "--exclude-domains", d
		}
	}
	if len(f.include) == 0 {
		return "", ""
	}
	for _, d := range f.include {
		if Within(name, d) {
			return "", ""
		}
	}
	return "--domain-filter", strings.Join(f.include, ",")
}

// Within reports whether name is domain or below it; a domain written
// ".example.com" holds only the names strictly below it. Both are
// normalized (events.NormalizeName).
func Within(name, domain string) bool {
	if strings.HasPrefix(domain, ".") {
		return strings.HasSuffix(name, domain)
	}
	return name == domain || strings.HasSuffix(name, "."+domain)
}
