package planner

import (
	"sort"
	"strings"
)

// The TXT registry, in ExternalDNS' format, so that zonestream can take over
// records ExternalDNS wrote and the other way round. For a record of type T
// at name N it writes, at "<t>-N" (the new format), one TXT string:
//
//	heritage=external-dns,external-dns/owner=<id>,external-dns/resource=<kind/ns/name>
//
// It also reads the old format, the same string in a TXT at N itself.
const (
	heritage      = "external-dns"
	labelHeritage = "heritage"
	labelOwner    = "external-dns/owner"
	labelResource = "external-dns/resource"
)

// ownership is one parsed registry TXT string.
type ownership struct {
	owner    string
	resource string
}

// parseOwnership reads a registry TXT string; ok is false for any TXT that is
// not one (an SPF record, a verification token...).
func parseOwnership(txt string) (ownership, bool) {
	txt = strings.Trim(txt, `"`)
	labels := map[string]string{}
	for _, kv := range strings.Split(txt, ",") {
		k, v, found := strings.Cut(kv, "=")
		if !found {
			return ownership{}, false
		}
		labels[k] = v
	}
	if labels[labelHeritage] != heritage {
		return ownership{}, false
	}
	return ownership{owner: labels[labelOwner], resource: labels[labelResource]}, true
}

// format renders the registry string, keys in ExternalDNS' order: heritage
// first, then the others sorted.
func (o ownership) format() string {
	labels := map[string]string{labelOwner: o.owner}
	if o.resource != "" {
		labels[labelResource] = o.resource
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := []string{labelHeritage + "=" + heritage}
	for _, k := range keys {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

// txtName is where the new-format registry record of (name, recordType)
// lives: the record type, lower case, and a dash before the first label.
func txtName(name, recordType string) string {
	return strings.ToLower(recordType) + "-" + name
}

// ownedName maps a new-format registry name back to the record name it
// speaks for, so a change to "a-www.example.com" re-plans www.example.com.
func ownedName(name string, managed []string) (string, bool) {
	for _, t := range managed {
		if p := strings.ToLower(t) + "-"; strings.HasPrefix(name, p) && len(name) > len(p) {
			return name[len(p):], true
		}
	}
	return "", false
}
