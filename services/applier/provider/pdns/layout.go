package pdns

import (
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// The API's JSON.
type zoneJSON struct {
	ID     string      `json:"id"`
	Name   string      `json:"name"`
	Kind   string      `json:"kind,omitempty"`
	RRsets []rrsetJSON `json:"rrsets,omitempty"`
	// Serial and EditedSerial change with every edit of the zone through
	// the API (and with SOA-EDIT-API): listing.go compares them.
	Serial       uint32 `json:"serial,omitempty"`
	EditedSerial uint32 `json:"edited_serial,omitempty"`
}

type rrsetJSON struct {
	Name       string       `json:"name"`
	Type       string       `json:"type"`
	TTL        int64        `json:"ttl,omitempty"`
	ChangeType string       `json:"changetype,omitempty"`
	Records    []recordJSON `json:"records,omitempty"`
}

type recordJSON struct {
	Content  string `json:"content"`
	Disabled bool   `json:"disabled"`
}

// skipped are the types Records does not report: the SOA, and what DNSSEC
// signing adds.
var skipped = []string{"SOA", "RRSIG", "NSEC", "NSEC3", "NSEC3PARAM"}

// endpointsOf turns rrsets of zone into endpoints, one per name and type,
// leaving out disabled records, the skipped types and names outside zone.
func endpointsOf(zone string, rrsets []rrsetJSON) []events.Endpoint {
	sets := make(map[events.RRsetKey]*events.Endpoint)
	var keys []events.RRsetKey
	for _, rs := range rrsets {
		typ := strings.ToUpper(rs.Type)
		name := events.NormalizeName(rs.Name)
		if slices.Contains(skipped, typ) || !provider.InZone(name, zone) {
			continue
		}
		k := events.RRsetKey{DNSName: name, RecordType: typ}
		for _, r := range rs.Records {
			if r.Disabled {
				continue
			}
			ep, ok := sets[k]
			if !ok {
				ep = &events.Endpoint{DNSName: name, RecordType: typ, RecordTTL: rs.TTL}
				sets[k] = ep
				keys = append(keys, k)
			}
			ep.Targets = append(ep.Targets, Target(typ, r.Content))
		}
	}
	eps := make([]events.Endpoint, 0, len(keys))
	for _, k := range keys {
		eps = append(eps, provider.NormalizeEndpoint(*sets[k]))
	}
	events.SortEndpoints(eps)
	return eps
}

// Target turns a record's PowerDNS content into an endpoint target: the IP
// for A/AAAA, the name without trailing dot for CNAME/NS/PTR/DNAME, the
// concatenated, unquoted character-strings for TXT (and SPF), the content
// itself otherwise.
func Target(rtype, content string) string {
	content = strings.TrimSpace(content)
	switch rtype = strings.ToUpper(rtype); {
	case rtype == "A" || rtype == "AAAA":
		if a, err := netip.ParseAddr(content); err == nil {
			return a.String()
		}
	case slices.Contains(provider.NameTargetTypes, rtype):
		return events.NormalizeName(content)
	case rtype == "TXT" || rtype == "SPF":
		return ParseTXT(content)
	}
	return content
}

// Content turns an endpoint target into PowerDNS content, the form the API
// takes and gives back: canonical IPs, absolute names with a trailing dot,
// TXT as quoted character-strings of at most 255 bytes, escaped. A target
// PowerDNS would not take (a bad IP) is passed on for it to reject.
func Content(rtype, target string) string {
	switch rtype = strings.ToUpper(rtype); {
	case rtype == "A" || rtype == "AAAA":
		if a, err := netip.ParseAddr(strings.TrimSpace(target)); err == nil {
			return a.String()
		}
		return target
	case slices.Contains(provider.NameTargetTypes, rtype):
		return fqdn(target)
	case rtype == "TXT" || rtype == "SPF":
		return QuoteTXT(target)
	case rtype == "MX" || rtype == "SRV":
		// The target name is the last field; PowerDNS wants it absolute.
		f := strings.Fields(target)
		if len(f) > 1 {
			f[len(f)-1] = fqdn(f[len(f)-1])
			return strings.Join(f, " ")
		}
	}
	return strings.TrimSpace(target)
}

func fqdn(name string) string { return events.NormalizeName(name) + "." }

// QuoteTXT writes a TXT value as PowerDNS content: character-strings of at
// most 255 bytes (provider.SplitTXT), each in double quotes.
// (miekg/dns keeps TXT strings already escaped, so it cannot do this for a
// raw value.)
func QuoteTXT(v string) string {
	return `"` + strings.Join(provider.SplitTXT(v), `" "`) + `"`
}

// ParseTXT reads TXT content in presentation form — character-strings,
// quoted or not, separated by blanks, with \X and \DDD escapes — and
// returns them concatenated, unescaped.
func ParseTXT(content string) string {
	var b strings.Builder
	s := content
	for i := 0; i < len(s); {
		if isBlank(s[i]) {
			i++
			continue
		}
		quoted := s[i] == '"'
		if quoted {
			i++
		}
		start := i
		for i < len(s) && !(quoted && s[i] == '"') && !(!quoted && isBlank(s[i])) {
			if s[i] == '\\' && i+1 < len(s) {
				i++ // an escaped quote or blank ends nothing
			}
			i++
		}
		b.WriteString(provider.UnescapeTXT(s[start:i]))
		if quoted && i < len(s) {
			i++ // the closing quote
		}
	}
	return b.String()
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// contents is the sorted, de-duplicated PowerDNS content of ep's targets:
// the form preconditions are compared in.
func contents(rtype string, targets []string) []string {
	out := make([]string, 0, len(targets))
	for _, t := range targets {
		out = append(out, Content(rtype, t))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rrKey names an RRset the way PowerDNS does: absolute name, type.
type rrKey struct{ name, rtype string }

func keyOf(k events.RRsetKey) rrKey {
	return rrKey{fqdn(k.DNSName), strings.ToUpper(k.RecordType)}
}

// ZoneID is the API's id of a zone: the absolute name, characters other
// than letters, digits, '.' and '-' written =XX (as PowerDNS does).
func ZoneID(zone string) string {
	name := fqdn(zone)
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "=%02X", c)
		}
	}
	if b.String() == "." {
		return "=2E"
	}
	return b.String()
}

func zonePath(zone string) string { return "/zones/" + url.PathEscape(ZoneID(zone)) }
