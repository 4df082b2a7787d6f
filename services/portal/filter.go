package portal

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// Filters are the planner's domain filters: a name they leave out is wanted
// but never planned, and the portal says so. The all-in-one takes the
// planner's flags; a portal on its own is given the same.
type Filters struct {
	Include, Exclude []string
	// Regex and RegexExclusion, when either is set, replace the lists, as
	// in the planner (--regex-domain-filter, --regex-domain-exclusion).
	Regex, RegexExclusion string
}

// reasoner returns why the filters leave a name out ("" when they do
// not), or an error for an expression that does not compile.
func (f Filters) reasoner() (func(name string) string, error) {
	if f.Regex != "" || f.RegexExclusion != "" {
		var in, out *regexp.Regexp
		var err error
		if f.Regex != "" {
			if in, err = regexp.Compile(f.Regex); err != nil {
				return nil, fmt.Errorf("--regex-domain-filter: %w", err)
			}
		}
		if f.RegexExclusion != "" {
			if out, err = regexp.Compile(f.RegexExclusion); err != nil {
				return nil, fmt.Errorf("--regex-domain-exclusion: %w", err)
			}
		}
		return func(name string) string {
			switch {
			case out != nil && out.MatchString(name):
				return "excluded by --regex-domain-exclusion " + f.RegexExclusion
			case in != nil && !in.MatchString(name):
				return "outside --regex-domain-filter " + f.Regex
			}
			return ""
		}, nil
	}
	return func(name string) string {
		if d := slices.IndexFunc(f.Exclude, func(d string) bool { return under(name, d) }); d >= 0 {
			return "excluded by --exclude-domains " + f.Exclude[d]
		}
		if len(f.Include) > 0 && !slices.ContainsFunc(f.Include, func(d string) bool { return under(name, d) }) {
			return "outside --domain-filter " + strings.Join(f.Include, ",")
		}
		return ""
	}, nil
}

// under: name is domain or below it; ".domain" only below it.
func under(name, domain string) bool {
	if sub, ok := strings.CutPrefix(domain, "."); ok {
		return strings.HasSuffix(name, "."+events.NormalizeName(sub))
	}
	domain = events.NormalizeName(domain)
	return name == domain || strings.HasSuffix(name, "."+domain)
}
