package registry

import (
	"slices"
	"strings"
)

// A registry string, in ExternalDNS' format, so that zonestream can take
// over records ExternalDNS wrote and the other way round, is
//
//	heritage=external-dns,external-dns/owner=<id>,external-dns/resource=<kind/ns/name>
//
// (ExternalDNS' Labels.SerializePlain: heritage first, then the
// "external-dns/<key>=<value>" labels sorted by key), written for a record
// of type T at name N at the new-format name (names.go), or encrypted
// (crypto.go). The old format, one string at a name for every type there,
// is read too, and so are the per-record-type fields of the extended TXT
// registry:
//
//	heritage=external-dns,external-dns/owner=<id>,record-type/A=managed,record-type/AAAA=managed
//
// which say the owner manages only those types at the name.
const (
	heritage        = "external-dns"
	labelHeritage   = "heritage"
	labelOwner      = "external-dns/owner"
	labelResource   = "external-dns/resource"
	recordTypeField = "record-type/"
	managedValue    = "managed"
)

// Labels are what one registry string says.
type Labels struct {
	Owner    string
	Resource string
	// Types are the record-type/<T>=managed fields, upper case and
	// sorted; nil when the string has none.
	Types []string
}

// Parse reads a plain registry string as ExternalDNS'
// NewLabelsFromStringPlain does: quotes trimmed, comma-separated tokens,
// tokens that are not exactly "key=value" skipped, heritage required and
// any other heritage rejected. ok is false for any TXT that is not one (an
// SPF record, a verification token...).
func Parse(txt string) (Labels, bool) {
	txt = strings.Trim(txt, `"`)
	var l Labels
	found := false
	for _, tok := range strings.Split(txt, ",") {
		kv := strings.Split(tok, "=")
		if len(kv) != 2 {
			continue
		}
		k, v := kv[0], kv[1]
		switch {
		case k == labelHeritage && v != heritage:
			return Labels{}, false
		case k == labelHeritage:
			found = true
		case k == labelOwner:
			l.Owner = v
		case k == labelResource:
			l.Resource = v
		case strings.HasPrefix(k, recordTypeField) && v == managedValue:
			l.Types = append(l.Types, strings.ToUpper(strings.TrimPrefix(k, recordTypeField)))
		}
	}
	if !found {
		return Labels{}, false
	}
	if l.Types != nil {
		slices.Sort(l.Types)
		l.Types = slices.Compact(l.Types)
	}
	return l, true
}

// Format renders the plain registry string: ExternalDNS' labels first, in
// its order, then the record-type fields, if any, sorted.
func (l Labels) Format() string {
	parts := []string{labelHeritage + "=" + heritage, labelOwner + "=" + l.Owner}
	if l.Resource != "" {
		parts = append(parts, labelResource+"="+l.Resource)
	}
	for _, t := range l.Types {
		parts = append(parts, recordTypeField+t+"="+managedValue)
	}
	return strings.Join(parts, ",")
}

// Covers reports whether the string speaks for recordType. A string with
// record-type fields covers those types only. Without them, a new-format
// string covers the type its name encodes, and an old-format string every
// type but AAAA: ExternalDNS never wrote AAAA ownership in the old format
// and never reads it from there (registry/txt: "Handle both new and old
// registry format with the preference for the new one").
//
// A user's TXT is covered only by its own new-format record (txt-<name>)
// or by an explicit record-type/TXT field: never implicitly by a string
// that shares an RRset with it or sits at an old-format name (oldFormat is
// set for both), so that an SPF record beside an old-format or apex
// ownership string is never taken for ours.
func (l Labels) Covers(recordType string, oldFormat bool) bool {
	if l.Types != nil {
		return slices.Contains(l.Types, recordType)
	}
	if recordType == "TXT" {
		return !oldFormat
	}
	return !oldFormat || recordType != "AAAA"
}

// Same reports whether two strings say the same.
func (l Labels) Same(o Labels) bool {
	return l.Owner == o.Owner && l.Resource == o.Resource && slices.Equal(l.Types, o.Types)
}
