package crd

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
)

// ReasonInvalidEndpoint is the Event reason (and the invalid-input
// metric's reason label) of a spec.endpoints entry that was skipped.
const ReasonInvalidEndpoint = "InvalidEndpoint"

// RecordTypes are the record types a DNSEndpoint may ask for: the enum of
// ExternalDNS' CRD (case-sensitive).
var RecordTypes = []string{"A", "AAAA", "CNAME", "DNAME", "MX", "NAPTR", "NS", "PTR", "SRV", "TLSA", "TXT"}

// ParseEndpoints maps spec.endpoints of a DNSEndpoint onto events.Endpoint
// field for field (dnsName, targets, recordType, setIdentifier, recordTTL,
// labels, providerSpecific). An entry that cannot be decoded or is not
// valid (ValidateEndpoint) is skipped and returned as a problem.
func ParseEndpoints(u *unstructured.Unstructured) ([]events.Endpoint, []error) {
	return parseEndpoints(u, false)
}

// parseEndpoints is ParseEndpoints; with noTargetsOK (--default-targets
// given), an entry without targets is valid: the collector gives it the
// default targets.
func parseEndpoints(u *unstructured.Unstructured, noTargetsOK bool) ([]events.Endpoint, []error) {
	var problems []error
	problem := func(i int, err error) {
		problems = append(problems, &source.Problem{Object: u, Reason: ReasonInvalidEndpoint,
			Field: fmt.Sprintf("spec.endpoints[%d]", i), Err: err})
	}
	raw, found, err := unstructured.NestedFieldNoCopy(u.Object, "spec", "endpoints")
	if err != nil || !found || raw == nil {
		return nil, nil
	}
	items, ok := raw.([]any)
	if !ok {
		return nil, []error{&source.Problem{Object: u, Reason: ReasonInvalidEndpoint, Field: "spec.endpoints",
			Err: fmt.Errorf("not a list but %T", raw)}}
	}
	var eps []events.Endpoint
	for i, item := range items {
		m, ok := item.(map[string]any)
		if !ok {
			problem(i, fmt.Errorf("not an object but %T", item))
			continue
		}
		// Through JSON, for errors that name the field (a looser CRD may
		// let a recordTTL string through).
		var ep events.Endpoint
		data, err := json.Marshal(m)
		if err == nil {
			err = json.Unmarshal(data, &ep)
		}
		if err != nil {
			problem(i, err)
			continue
		}
		if err := validateEndpoint(&ep, noTargetsOK); err != nil {
			problem(i, err)
			continue
		}
		ep.ProviderSpecific = source.CanonicalProperties(ep.ProviderSpecific)
		ep.Normalize()
		eps = append(eps, ep)
	}
	events.SortEndpoints(eps)
	return eps, problems
}

// ValidateEndpoint checks one entry: a valid DNS name (a leading "*." is
// allowed), a record type of RecordTypes, at least one target, every
// target of the form its type needs (A: IPv4 address, AAAA: IPv6
// address, CNAME/NS/PTR/DNAME: a host name, MX: "<preference> <host>",
// SRV: "<priority> <weight> <port> <host>"; TXT, NAPTR, TLSA: anything
// non-empty), a TTL in 0..2^31-1. Trailing dots are accepted.
func ValidateEndpoint(ep *events.Endpoint) error { return validateEndpoint(ep, false) }

func validateEndpoint(ep *events.Endpoint, noTargetsOK bool) error {
	name := strings.TrimSuffix(ep.DNSName, ".")
	if err := source.ValidateHostname(name, true); err != nil {
		return fmt.Errorf("dnsName: %w", err)
	}
	if !slices.Contains(RecordTypes, ep.RecordType) {
		return fmt.Errorf("recordType %q is not one of %s", ep.RecordType, strings.Join(RecordTypes, ", "))
	}
	if ep.RecordTTL < 0 || ep.RecordTTL > math.MaxInt32 {
		return fmt.Errorf("recordTTL %d is outside 0..%d", ep.RecordTTL, math.MaxInt32)
	}
	if len(ep.Targets) == 0 && !noTargetsOK {
		return fmt.Errorf("%s record %s has no targets", ep.RecordType, name)
	}
	for _, t := range ep.Targets {
		if err := validateTarget(ep.RecordType, t); err != nil {
			return fmt.Errorf("%s record %s: %w", ep.RecordType, name, err)
		}
	}
	for _, p := range ep.ProviderSpecific {
		if p.Name == "" {
			return fmt.Errorf("providerSpecific: empty name")
		}
	}
	return nil
}

func validateTarget(recordType, t string) error {
	switch recordType {
	case "A", "AAAA":
		a, err := netip.ParseAddr(strings.TrimSpace(t))
		if err != nil || (recordType == "A") != (a.Is4() || a.Is4In6()) {
			return fmt.Errorf("target %q is not an IPv%s address", t, map[string]string{"A": "4", "AAAA": "6"}[recordType])
		}
	case "CNAME", "NS", "PTR", "DNAME":
		return hostTarget(t)
	case "MX":
		f := strings.Fields(t)
		if len(f) != 2 || !uint16Field(f[0]) {
			return fmt.Errorf("target %q is not \"<preference> <host>\"", t)
		}
		return hostTarget(f[1])
	case "SRV":
		f := strings.Fields(t)
		if len(f) != 4 || !uint16Field(f[0]) || !uint16Field(f[1]) || !uint16Field(f[2]) {
			return fmt.Errorf("target %q is not \"<priority> <weight> <port> <host>\"", t)
		}
		if f[3] == "." {
			return nil
		}
		return hostTarget(f[3])
	default:
		if strings.TrimSpace(t) == "" {
			return fmt.Errorf("empty target")
		}
	}
	return nil
}

func hostTarget(t string) error {
	h := strings.TrimSuffix(strings.TrimSpace(t), ".")
	if _, err := netip.ParseAddr(h); err == nil {
		return fmt.Errorf("target %q is an address, not a host name", t)
	}
	if err := source.ValidateTarget(h); err != nil {
		return err
	}
	return nil
}

func uint16Field(s string) bool {
	_, err := strconv.ParseUint(s, 10, 16)
	return err == nil
}

// indexDNSName indexes DNSEndpoints by the normalized dnsName of each
// entry: what an observed state at a name looks up.
const indexDNSName = "zonestream/dnsname"

func dnsNames(obj any) ([]string, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, nil
	}
	items, _, _ := unstructured.NestedSlice(u.Object, "spec", "endpoints")
	var names []string
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			if n, ok := m["dnsName"].(string); ok && n != "" {
				names = append(names, events.NormalizeName(n))
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}
