package planner

import (
	"slices"
	"strings"
)

// The TXT registry, in ExternalDNS' format, so that zonestream can take over
// records ExternalDNS wrote and the other way round. A registry string is
//
//	heritage=external-dns,external-dns/owner=<id>,external-dns/resource=<kind/ns/name>
//
// (ExternalDNS' Labels.SerializePlain: heritage first, then the
// "external-dns/<key>=<value>" labels sorted by key), written for a record
// of type T at name N at the new-format name (registry_names.go), or
// encrypted (registry_crypto.go). The old format, one string at a name for
// every type there, is read too, and so are the per-record-type fields of
// the extended TXT registry (reference 004):
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

// ownership is one parsed registry TXT string.
type ownership struct {
	owner    string
	resource string
	// types are the record-type/<T>=managed fields, upper case and sorted;
	// nil when the string has none.
	types []string
}

// parseOwnership reads a plain registry TXT string as ExternalDNS'
// NewLabelsFromStringPlain does: quotes trimmed, comma-separated tokens,
// tokens that are not exactly "key=value" skipped, heritage required and
// any other heritage rejected. ok is false for any TXT that is not one (an
// SPF record, a verification token...).
func parseOwnership(txt string) (ownership, bool) {
	txt = strings.Trim(txt, `"`)
	var o ownership
	found := false
	for _, tok := range strings.Split(txt, ",") {
		kv := strings.Split(tok, "=")
		if len(kv) != 2 {
			continue
		}
		k, v := kv[0], kv[1]
		switch {
		case k == labelHeritage && v != heritage:
			return ownership{}, false
		case k == labelHeritage:
			found = true
		case k == labelOwner:
			o.owner = v
		case k == labelResource:
			o.resource = v
		case strings.HasPrefix(k, recordTypeField) && v == managedValue:
			o.types = append(o.types, strings.ToUpper(strings.TrimPrefix(k, recordTypeField)))
		}
	}
	if !found {
		return ownership{}, false
	}
	if o.types != nil {
		slices.Sort(o.types)
		o.types = slices.Compact(o.types)
	}
	return o, true
}

// format renders the plain registry string: ExternalDNS' labels first, in
// its order, then our record-type fields, if any, sorted.
func (o ownership) format() string {
	parts := []string{labelHeritage + "=" + heritage, labelOwner + "=" + o.owner}
	if o.resource != "" {
		parts = append(parts, labelResource+"="+o.resource)
	}
	for _, t := range o.types {
		parts = append(parts, recordTypeField+t+"="+managedValue)
	}
	return strings.Join(parts, ",")
}

// covers reports whether the string speaks for recordType. A string with
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
func (o ownership) covers(recordType string, oldFormat bool) bool {
	if o.types != nil {
		return slices.Contains(o.types, recordType)
	}
	if recordType == "TXT" {
		return !oldFormat
	}
	return !oldFormat || recordType != "AAAA"
}

func (o ownership) same(p ownership) bool {
	return o.owner == p.owner && o.resource == p.resource && slices.Equal(o.types, p.types)
}

// registry is the registry configuration planName reads: immutable once
// built, so planName stays a pure function.
type registry struct {
	noop     bool // --registry=noop: no ownership records; everything is ours
	ownerID  string
	migrate  string   // --migrate-from-txt-owner: taken as ours, rewritten
	adopt    []string // --txt-adopt-owner: taken over, rewritten
	names    nameMapper
	aesKey   []byte // set: encrypted strings are read
	encrypt  bool   // write encrypted strings
	managed  []string
	excluded []string
}

// role is how we treat a registry string's owner.
type role int

const (
	roleForeign  role = iota // someone else's: never touched
	roleMine                 // ours
	roleTakeover             // --migrate-from-txt-owner or --txt-adopt-owner: ours, to be rewritten
)

func (r *registry) role(owner string) role {
	switch {
	case owner == r.ownerID:
		return roleMine
	case r.migrate != "" && owner == r.migrate, slices.Contains(r.adopt, owner):
		return roleTakeover
	}
	return roleForeign
}

// parse reads a TXT string as a registry string, decrypting it first when a
// key is set; a string that does not decrypt is read as plain text, as
// ExternalDNS does (a zone may hold both).
func (r *registry) parse(txt string) (ownership, bool) {
	if r.aesKey != nil {
		if plain, _, err := decryptText(txt, r.aesKey); err == nil {
			return parseOwnership(plain)
		}
	}
	return parseOwnership(txt)
}

// render writes our string for the registry record at name.
func (r *registry) render(o ownership, name string) string {
	plain := o.format()
	if !r.encrypt {
		return plain
	}
	s, err := encryptText(plain, r.aesKey, syntheticNonce(r.aesKey, name, plain))
	if err != nil {
		// The key was validated at start: AES-256 with a 12-byte nonce
		// cannot fail.
		panic("txt registry encryption: " + err.Error())
	}
	return s
}
