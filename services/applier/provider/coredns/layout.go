package coredns

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// record is one etcd value in the SkyDNS layout, as CoreDNS' etcd plugin
// and ExternalDNS read and write it. Fields we do not use (port, priority,
// weight, mail) are kept as they are when an entry is rewritten.
type record struct {
	Host string `json:"host,omitempty"`
	Text string `json:"text,omitempty"`
	TTL  uint32 `json:"ttl,omitempty"`
	// TargetStrip is how many trailing key segments are not part of the
	// name: ExternalDNS and this provider put each record under an id one
	// level below its name, with targetstrip 1.
	TargetStrip int    `json:"targetstrip,omitempty"`
	Group       string `json:"group,omitempty"`
	// SetIdentifier is written by ExternalDNS (and read back); CoreDNS
	// ignores it.
	SetIdentifier string `json:"setIdentifier,omitempty"`
}

// The value fields that hold a record.
const (
	fieldHost = "host"
	fieldText = "text"
)

// GroupProperty is the provider-specific property (on an endpoint) that
// sets an entry's group, as in ExternalDNS (annotation
// external-dns.alpha.kubernetes.io/coredns-group).
const GroupProperty = "coredns/group"

// Types are the record types the layout holds: host is an IPv4 address
// (A), an IPv6 address (AAAA) or a name (CNAME); text is a TXT value.
var Types = []string{"A", "AAAA", "CNAME", "TXT"}

// part is one record an etcd entry holds: an entry holds a host, a text,
// or (written by ExternalDNS) both.
type part struct {
	set    events.RRsetKey
	field  string
	target string
	ttl    int64
	group  string
}

// entry is one parsed etcd key.
type entry struct {
	key   string
	name  string
	parts []part
}

// namePath is the key prefix of name: prefix, then its labels in reverse
// order, separated by '/' (no trailing slash).
func namePath(prefix, name string) string {
	labels := strings.Split(events.NormalizeName(name), ".")
	slices.Reverse(labels)
	return prefix + strings.Join(labels, "/")
}

// recordID is the last key segment of a record written by this provider:
// eight hex digits, as ExternalDNS' random ids, but derived from the
// record so that writing it again lands on the same key.
func recordID(set events.RRsetKey, target string, salt int) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%d", set.RecordType, set.SetIdentifier, target, salt)
	return fmt.Sprintf("%08x", h.Sum32())
}

// parseEntry reads one etcd key and value: the name is the key's segments
// after the prefix, reversed, without the last targetstrip of them; the
// host gives an A, AAAA or CNAME record (as CoreDNS serves it), the text a
// TXT record.
func parseEntry(prefix, key string, value []byte) (entry, error) {
	rest, ok := strings.CutPrefix(key, prefix)
	if !ok {
		return entry{}, fmt.Errorf("key %q is not under %q", key, prefix)
	}
	var svc record
	if err := json.Unmarshal(value, &svc); err != nil {
		return entry{}, fmt.Errorf("key %q: value is not a SkyDNS service: %w", key, err)
	}
	segs := strings.Split(rest, "/")
	if slices.Contains(segs, "") {
		return entry{}, fmt.Errorf("key %q: empty label", key)
	}
	if svc.TargetStrip < 0 || svc.TargetStrip >= len(segs) {
		return entry{}, fmt.Errorf("key %q: targetstrip %d leaves no name", key, svc.TargetStrip)
	}
	labels := slices.Clone(segs[:len(segs)-svc.TargetStrip])
	slices.Reverse(labels)
	e := entry{key: key, name: events.NormalizeName(strings.Join(labels, "."))}
	if svc.Host != "" {
		typ, target := "CNAME", events.NormalizeName(svc.Host)
		if ip := net.ParseIP(svc.Host); ip != nil {
			// As CoreDNS' etcd plugin tells them apart.
			typ, target = "AAAA", ip.String()
			if ip.To4() != nil {
				typ, target = "A", ip.To4().String()
			}
		}
		e.parts = append(e.parts, e.part(svc, typ, fieldHost, target))
	}
	if svc.Text != "" {
		e.parts = append(e.parts, e.part(svc, "TXT", fieldText, svc.Text))
	}
	if len(e.parts) == 0 {
		return entry{}, fmt.Errorf("key %q: neither host nor text", key)
	}
	return e, nil
}

func (e entry) part(svc record, typ, field, target string) part {
	return part{
		set:   events.RRsetKey{DNSName: e.name, RecordType: typ, SetIdentifier: svc.SetIdentifier},
		field: field, target: target, ttl: int64(svc.TTL), group: svc.Group,
	}
}

// checkNew says why ep cannot be written in the layout, if it cannot.
func checkNew(ep events.Endpoint) error {
	name := events.NormalizeName(ep.DNSName)
	if strings.Contains(name, "/") || slices.Contains(strings.Split(name, "."), "") {
		return fmt.Errorf("%s: the name cannot be an etcd key (empty label or '/')", ep.DNSName)
	}
	typ := strings.ToUpper(ep.RecordType)
	if !slices.Contains(Types, typ) {
		return fmt.Errorf("%s %s: CoreDNS' etcd layout holds only %s records", ep.DNSName, ep.RecordType, strings.Join(Types, ", "))
	}
	if typ == "CNAME" && len(ep.Targets) != 1 {
		return fmt.Errorf("%s CNAME: %d targets, a CNAME has one", ep.DNSName, len(ep.Targets))
	}
	for _, t := range ep.Targets {
		ip := net.ParseIP(strings.TrimSpace(t))
		switch {
		case typ == "A" && (ip == nil || ip.To4() == nil):
			return fmt.Errorf("%s A: %q is not an IPv4 address", ep.DNSName, t)
		case typ == "AAAA" && (ip == nil || ip.To4() != nil):
			return fmt.Errorf("%s AAAA: %q is not an IPv6 address", ep.DNSName, t)
		case typ == "CNAME" && (ip != nil || events.NormalizeName(t) == "" || strings.ContainsAny(t, " \t/")):
			return fmt.Errorf("%s CNAME: %q is not a host name", ep.DNSName, t)
		case typ == "TXT" && t == "":
			return errors.New(ep.DNSName + " TXT: empty value (CoreDNS would serve it as a CNAME)")
		}
	}
	return nil
}

// groupOf is ep's coredns/group property.
func groupOf(ep events.Endpoint) string {
	for _, p := range ep.ProviderSpecific {
		if p.Name == GroupProperty {
			return p.Value
		}
	}
	return ""
}
