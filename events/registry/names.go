package registry

import "strings"

// Where registry records live: ExternalDNS' affixNameMapper
// (registry/mapper/mapper.go), with --txt-prefix, --txt-suffix (mutually
// exclusive, both lower-cased, both may hold %{record_type}) and
// --txt-wildcard-replacement. The record name is split at its first dot
// into the first label and the rest; then, for a record of type T (t is T
// lower-cased):
//
//	new format: <prefix'><label'><suffix'>.<rest>
//	  prefix', suffix': %{record_type} replaced by t
//	  label':           "<t>-<label>" unless an affix holds %{record_type};
//	                    a label "*" is first replaced by the wildcard
//	                    replacement, when one is set
//	old format: <prefix"><label"><suffix">.<rest>
//	  prefix", suffix": %{record_type} removed; no "<t>-"
//
// e.g. A www.example.org: a-www.example.org (no affix),
// txt.a-www.example.org (--txt-prefix=txt.), a-www-txt.example.org
// (--txt-suffix=-txt), a.www.example.org (--txt-prefix=%{record_type}.).
const recordTemplate = "%{record_type}"

// supportedRecords are the types ExternalDNS recognises in a registry name,
// in the order it tries them.
var supportedRecords = []string{"A", "AAAA", "CNAME", "NS", "MX", "PTR", "SRV", "NAPTR", "TXT", "DNAME"}

// Names maps record names to their registry names and back, for one set
// of affixes.
type Names struct {
	prefix, suffix, wildcard string
}

// NewNames is the mapping for --txt-prefix, --txt-suffix and
// --txt-wildcard-replacement.
func NewNames(prefix, suffix, wildcardReplacement string) Names {
	return Names{prefix: strings.ToLower(prefix), suffix: strings.ToLower(suffix),
		wildcard: strings.ToLower(wildcardReplacement)}
}

func (m Names) typeInAffix() bool {
	return strings.Contains(m.prefix, recordTemplate) || strings.Contains(m.suffix, recordTemplate)
}

func (m Names) isPrefix() bool { return m.suffix == "" }

func (m Names) isSuffix() bool { return m.prefix == "" && m.suffix != "" }

// TXTName is ExternalDNS' ToTXTName (toNewTXTName before 0.15): the
// new-format registry name of a record of recordType at name.
func (m Names) TXTName(name, recordType string) string {
	t := strings.ToLower(recordType)
	prefix := strings.ReplaceAll(m.prefix, recordTemplate, t)
	suffix := strings.ReplaceAll(m.suffix, recordTemplate, t)
	label, rest, dotted := strings.Cut(name, ".")
	if m.wildcard != "" && label == "*" {
		label = m.wildcard
	}
	if !m.typeInAffix() {
		label = t + "-" + label
	}
	if !dotted {
		return prefix + label + suffix
	}
	return prefix + label + suffix + "." + rest
}

// OwnedAsType is the record type the ownership record of a record of
// recordType is named by: its own, except that an alias A record
// (provider-specific alias=true: Route53's alias to an ELB) is owned as the
// CNAME it stands for ("cname-www"), as ExternalDNS' registry names it.
func OwnedAsType(recordType string, alias bool) string {
	if alias && recordType == "A" {
		return "CNAME"
	}
	return recordType
}

// OldTXTName is ExternalDNS' toTXTName (before 0.12 the only format, until
// 0.15 written beside the new one): the registry name of every type at name.
func (m Names) OldTXTName(name string) string {
	prefix := strings.ReplaceAll(m.prefix, recordTemplate, "")
	suffix := strings.ReplaceAll(m.suffix, recordTemplate, "")
	label, rest, dotted := strings.Cut(name, ".")
	if m.wildcard != "" && label == "*" {
		label = m.wildcard
	}
	if !dotted {
		return prefix + label + suffix
	}
	return prefix + label + suffix + "." + rest
}

// EndpointName is ExternalDNS' ToEndpointName: the record name and type a
// registry name speaks for; recordType is "" for an old-format name, and
// name is "" when the name cannot be a registry name at all. A wildcard
// replacement is not undone here (ExternalDNS matches it the other way
// round); RecordNames does.
func (m Names) EndpointName(txt string) (name, recordType string) {
	lower := strings.ToLower(txt)
	if m.isPrefix() {
		return m.dropAffixExtractType(lower)
	}
	if m.isSuffix() {
		dc := strings.Count(m.suffix, ".")
		parts := strings.SplitN(lower, ".", 2+dc)
		if len(parts) <= dc {
			return "", ""
		}
		r, t := m.dropAffixExtractType(strings.Join(parts[:1+dc], "."))
		if len(parts) <= 1+dc {
			return r, t
		}
		return r + "." + parts[1+dc], t
	}
	return "", ""
}

func (m Names) dropAffixExtractType(name string) (string, string) {
	prefix, suffix := m.prefix, m.suffix
	if m.typeInAffix() {
		for _, t := range supportedRecords {
			lt := strings.ToLower(t)
			p := strings.ReplaceAll(prefix, recordTemplate, lt)
			s := strings.ReplaceAll(suffix, recordTemplate, lt)
			if m.isPrefix() && strings.HasPrefix(name, p) {
				return strings.TrimPrefix(name, p), t
			}
			if m.isSuffix() && strings.HasSuffix(name, s) {
				return strings.TrimSuffix(name, s), t
			}
		}
		// old-format names: the affix without the template
		prefix = strings.ReplaceAll(prefix, recordTemplate, "")
		suffix = strings.ReplaceAll(suffix, recordTemplate, "")
	}
	if m.isPrefix() && strings.HasPrefix(name, prefix) {
		return typeInDefaultPosition(strings.TrimPrefix(name, prefix))
	}
	if m.isSuffix() && strings.HasSuffix(name, suffix) {
		return typeInDefaultPosition(strings.TrimSuffix(name, suffix))
	}
	return "", ""
}

// typeInDefaultPosition reads the "<t>-" in front of a name.
func typeInDefaultPosition(name string) (string, string) {
	first, _, _ := strings.Cut(name, "-")
	for _, t := range supportedRecords {
		if first == strings.ToLower(t) {
			return strings.TrimPrefix(name, first+"-"), t
		}
	}
	return name, ""
}

// RecordNames lists the record names whose ownership a TXT at txt may
// hold: the name EndpointName gives, the same with the wildcard replacement
// turned back into "*", and, since an old-format name read by
// EndpointName can look like a new-format one ("a-b.example.org"), the
// old-format reading as well. The planner re-plans all of them when such a
// TXT changes; planName itself only ever maps forward (TXTName, OldTXTName).
func (m Names) RecordNames(txt string) []string {
	var out []string
	add := func(n string) {
		if n == "" || n == txt {
			return
		}
		for _, o := range out {
			if o == n {
				return
			}
		}
		out = append(out, n)
	}
	name, _ := m.EndpointName(txt)
	old := m.oldRecordName(txt)
	for _, n := range []string{name, old} {
		add(n)
		if m.wildcard != "" {
			if label, rest, ok := strings.Cut(n, "."); ok && label == m.wildcard {
				add("*." + rest)
			}
		}
	}
	return out
}

// oldRecordName undoes OldTXTName.
func (m Names) oldRecordName(txt string) string {
	prefix := strings.ReplaceAll(m.prefix, recordTemplate, "")
	suffix := strings.ReplaceAll(m.suffix, recordTemplate, "")
	lower := strings.ToLower(txt)
	label, rest, dotted := strings.Cut(lower, ".")
	if prefix != "" {
		if !strings.HasPrefix(lower, prefix) {
			return ""
		}
		return strings.TrimPrefix(lower, prefix)
	}
	if suffix != "" {
		dc := strings.Count(suffix, ".")
		parts := strings.SplitN(lower, ".", 2+dc)
		if len(parts) <= dc {
			return ""
		}
		head := strings.Join(parts[:1+dc], ".")
		if !strings.HasSuffix(head, suffix) {
			return ""
		}
		head = strings.TrimSuffix(head, suffix)
		if len(parts) <= 1+dc {
			return head
		}
		return head + "." + parts[1+dc]
	}
	if !dotted {
		return label
	}
	return label + "." + rest
}
