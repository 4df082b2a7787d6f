package source

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"
	"unicode"

	"github.com/zonestream/zonestream/events"
)

// SplitList splits a comma-separated annotation or template result into
// its trimmed, non-empty items, each without a trailing dot.
func SplitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimFunc(item, unicode.IsSpace)
		item = strings.TrimSuffix(item, ".")
		if item != "" {
			out = append(out, item)
		}
	}
	return out
}

// ValidateHostname checks that name (without trailing dot) is a DNS name a
// zone can hold: at most 253 characters, labels of 1 to 63 letters, digits,
// '-' or '_', not starting or ending with '-'; the first label may be the
// wildcard '*' when wildcard is true.
func ValidateHostname(name string, wildcard bool) error {
	if name == "" {
		return errors.New("empty hostname")
	}
	if len(name) > 253 {
		return fmt.Errorf("hostname %q is longer than 253 characters", name)
	}
	for i, label := range strings.Split(name, ".") {
		if label == "*" && i == 0 && wildcard {
			continue
		}
		if label == "" || len(label) > 63 {
			return fmt.Errorf("hostname %q: label %q must be 1 to 63 characters", name, label)
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("hostname %q: label %q starts or ends with '-'", name, label)
		}
		for j := 0; j < len(label); j++ {
			c := label[j]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("hostname %q: label %q has invalid character %q", name, label, c)
			}
		}
	}
	return nil
}

// RecordTypeFor is the record type a target needs: A for an IPv4 address,
// AAAA for an IPv6 address, CNAME for anything else.
func RecordTypeFor(target string) string {
	if a, err := netip.ParseAddr(target); err == nil {
		if a.Is4() || a.Is4In6() {
			return events.RecordTypeA
		}
		return events.RecordTypeAAAA
	}
	return events.RecordTypeCNAME
}

// ValidateTarget accepts an IP address or a DNS name. A name whose last
// label is all digits ("300.1.1.1", "10.0.0") is a mistyped address, not a
// hostname: no top-level domain is numeric.
func ValidateTarget(target string) error {
	if _, err := netip.ParseAddr(target); err == nil {
		return nil
	}
	if err := ValidateHostname(target, false); err != nil || allDigits(target[strings.LastIndexByte(target, '.')+1:]) {
		return fmt.Errorf("target %q is neither an IP address nor a valid hostname", target)
	}
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ParseTTL reads a ttl annotation as ExternalDNS does: a Go duration ("5m")
// or whole seconds ("300"), between 1 second and 2^31-1 seconds.
func ParseTTL(s string) (int64, error) {
	s = strings.TrimSpace(s)
	var ttl int64
	if d, err := time.ParseDuration(s); err == nil {
		ttl = int64(d.Seconds())
	} else if n, err2 := strconv.ParseInt(s, 10, 64); err2 == nil {
		ttl = n
	} else {
		return 0, fmt.Errorf("ttl %q is neither a number of seconds nor a duration", s)
	}
	if ttl < 1 || ttl > math.MaxInt32 {
		return 0, fmt.Errorf("ttl %q is outside 1..%d seconds", s, math.MaxInt32)
	}
	return ttl, nil
}

// EndpointSet collects the targets an object wants per DNS name and
// record type, and renders them as one endpoint per name and type.
type EndpointSet struct {
	byName map[string]map[string][]string
}

// Add adds targets at name, each under the record type it needs.
func (s *EndpointSet) Add(name string, targets ...string) {
	for _, t := range targets {
		s.AddRecord(name, RecordTypeFor(t), t)
	}
}

// AddRecord adds targets at name under the given record type, as they are
// (SRV, ...: types a target's form does not tell).
func (s *EndpointSet) AddRecord(name, recordType string, targets ...string) {
	if len(targets) == 0 {
		return
	}
	name = events.NormalizeName(name)
	if s.byName == nil {
		s.byName = make(map[string]map[string][]string)
	}
	types := s.byName[name]
	if types == nil {
		types = make(map[string][]string)
		s.byName[name] = types
	}
	types[recordType] = append(types[recordType], targets...)
}

// Len is the number of names with at least one target.
func (s *EndpointSet) Len() int { return len(s.byName) }

// Endpoints renders the set with ttl (0: unset), sorted.
func (s *EndpointSet) Endpoints(ttl int64) []events.Endpoint {
	var eps []events.Endpoint
	for name, types := range s.byName {
		for rt, targets := range types {
			eps = append(eps, events.NewEndpoint(name, rt, ttl, slices.Clone(targets)...))
		}
	}
	events.SortEndpoints(eps)
	return eps
}

// TemplateFuncs are the functions an --fqdn-template may call, those of
// ExternalDNS.
var TemplateFuncs = template.FuncMap{
	"contains":   strings.Contains,
	"trimPrefix": strings.TrimPrefix,
	"trimSuffix": strings.TrimSuffix,
	"trim":       strings.TrimSpace,
	"toLower":    strings.ToLower,
	"toUpper":    strings.ToUpper,
	"replace":    func(old, new, s string) string { return strings.ReplaceAll(s, old, new) },
	"isIPv6":     func(s string) bool { a, err := netip.ParseAddr(s); return err == nil && a.Is6() && !a.Is4In6() },
	"isIPv4":     func(s string) bool { a, err := netip.ParseAddr(s); return err == nil && (a.Is4() || a.Is4In6()) },
	"hasKey": func(m map[string]string, k string) bool {
		_, ok := m[k]
		return ok
	},
}

// ParseFQDNTemplate parses --fqdn-template; an empty string is no template.
func ParseFQDNTemplate(s string) (*template.Template, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	t, err := template.New("fqdn").Funcs(TemplateFuncs).Option("missingkey=error").Parse(s)
	if err != nil {
		return nil, fmt.Errorf("--fqdn-template: %w", err)
	}
	return t, nil
}

// ExecFQDNTemplate runs the template over obj and splits the result into
// hostnames.
func ExecFQDNTemplate(t *template.Template, obj any) ([]string, error) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, obj); err != nil {
		return nil, err
	}
	return SplitList(buf.String()), nil
}
