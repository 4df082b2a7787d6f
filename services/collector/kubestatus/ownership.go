package kubestatus

import "strings"

// Ownership is what the planner's TXT registry is configured with
// (--txt-owner-id, --txt-prefix, --txt-suffix, --txt-wildcard-replacement):
// enough to tell records another owner holds from ours in flight. With no
// OwnerID, a name held by someone else reads as Pending, never NotOwned.
type Ownership struct {
	OwnerID             string
	Prefix              string
	Suffix              string
	WildcardReplacement string
}

// registryNames are the names of the ownership TXT records that may cover
// a record of recordType at name: ExternalDNS' new format, then the old
// one (one TXT for every type).
func (o Ownership) registryNames(name, recordType string) [2]string {
	t := strings.ToLower(recordType)
	const tmpl = "%{record_type}"
	label, rest, dotted := strings.Cut(name, ".")
	if o.WildcardReplacement != "" && label == "*" {
		label = strings.ToLower(o.WildcardReplacement)
	}
	affix := func(with string) (string, string) {
		p, s := strings.ToLower(o.Prefix), strings.ToLower(o.Suffix)
		return strings.ReplaceAll(p, tmpl, with), strings.ReplaceAll(s, tmpl, with)
	}
	typed := strings.Contains(o.Prefix, tmpl) || strings.Contains(o.Suffix, tmpl)
	var out [2]string
	for i, with := range []string{t, ""} {
		p, s := affix(with)
		l := label
		if i == 0 && !typed {
			l = t + "-" + label
		}
		out[i] = p + l + s
		if dotted {
			out[i] += "." + rest
		}
	}
	return out
}

// registryResource returns the resource (kind/namespace/name) an
// ownership TXT string names, "" for none.
func registryResource(txt string) string {
	heritage, resource := false, ""
	for tok := range strings.SplitSeq(strings.Trim(txt, `"`), ",") {
		k, v, _ := strings.Cut(tok, "=")
		switch k {
		case "heritage":
			heritage = v == "external-dns"
		case "external-dns/resource":
			resource = v
		}
	}
	if !heritage {
		return ""
	}
	return resource
}

// unparsable stands for an ownership TXT that cannot be read (encrypted
// with a key the collector lacks): it may be ours.
const unparsable = "?"

// registryOwner returns the owner an ownership TXT string names, "?" for
// one that looks encrypted, "" for a TXT that is no ownership record.
func registryOwner(txt string) string {
	txt = strings.Trim(txt, `"`)
	heritage, owner := false, ""
	for tok := range strings.SplitSeq(txt, ",") {
		k, v, ok := strings.Cut(tok, "=")
		switch {
		case !ok:
		case k == "heritage" && v == "external-dns":
			heritage = true
		case k == "external-dns/owner":
			owner = v
		}
	}
	if heritage {
		return owner
	}
	if len(txt) >= 24 && strings.Trim(txt, base64Alphabet) == "" {
		return unparsable // base64 of an encrypted string
	}
	return ""
}

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
