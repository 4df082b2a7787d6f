package registry

import (
	"slices"
	"strings"
	"testing"
)

func TestTXTNamesAreExternalDNS(t *testing.T) {
	cases := []struct {
		prefix, suffix, wildcard, name, typ string
		newName, oldName                    string
	}{
		{"", "", "", "foo.example.org", "A", "a-foo.example.org", "foo.example.org"},
		{"", "", "", "foo.example.org", "AAAA", "aaaa-foo.example.org", "foo.example.org"},
		{"", "", "", "foo.example.org", "cname", "cname-foo.example.org", "foo.example.org"},
		{"txt.", "", "", "foo.example.org", "A", "txt.a-foo.example.org", "txt.foo.example.org"},
		{"TXT-", "", "", "foo.example.org", "CNAME", "txt-cname-foo.example.org", "txt-foo.example.org"},
		{"", "-txt", "", "foo.example.org", "A", "a-foo-txt.example.org", "foo-txt.example.org"},
		{"", ".txt", "", "foo.bar.example.org", "A", "a-foo.txt.bar.example.org", "foo.txt.bar.example.org"},
		{"%{record_type}.", "", "", "foo.example.org", "AAAA", "aaaa.foo.example.org", ".foo.example.org"},
		{"%{record_type}-reg.", "", "", "foo.example.org", "A", "a-reg.foo.example.org", "-reg.foo.example.org"},
		{"", "-%{record_type}", "", "foo.example.org", "CNAME", "foo-cname.example.org", "foo-.example.org"},
		{"", "", "wildcard", "*.example.org", "A", "a-wildcard.example.org", "wildcard.example.org"},
		{"txt.", "", "any", "*.example.org", "A", "txt.a-any.example.org", "txt.any.example.org"},
		{"", "", "", "*.example.org", "A", "a-*.example.org", "*.example.org"},
		{"", "", "", "org", "A", "a-org", "org"},
	}
	for _, c := range cases {
		m := NewNames(c.prefix, c.suffix, c.wildcard)
		if got := m.TXTName(c.name, c.typ); got != c.newName {
			t.Errorf("%+v: txtName = %q, want %q", c, got, c.newName)
		}
		if got := m.OldTXTName(c.name); got != c.oldName {
			t.Errorf("%+v: oldTXTName = %q, want %q", c, got, c.oldName)
		}
	}
}

// Every combination of affix, record type, wildcard: the registry names map
// back to the record they speak for, with the type for the new format.
func TestTXTNamesRoundTrip(t *testing.T) {
	prefixes := []string{"", "txt.", "txt-", "%{record_type}.", "%{record_type}-", "reg-%{record_type}.", "Pre.%{record_type}."}
	suffixes := []string{"-txt", ".txt", "-%{record_type}", ".%{record_type}", "-%{record_type}.reg"}
	type affix struct{ prefix, suffix string }
	var affixes []affix
	for _, p := range prefixes {
		affixes = append(affixes, affix{p, ""})
	}
	for _, s := range suffixes {
		affixes = append(affixes, affix{"", s})
	}
	names := []string{"www.example.org", "a.b.example.org", "*.example.org", "*.sub.example.org", "my-app.example.org"}
	for _, a := range affixes {
		for _, wildcard := range []string{"", "wild"} {
			m := NewNames(a.prefix, a.suffix, wildcard)
			for _, name := range names {
				want := name
				if wildcard != "" && strings.HasPrefix(name, "*.") {
					want = wildcard + name[1:]
				}
				for _, typ := range []string{"A", "AAAA", "CNAME", "MX", "SRV", "NS"} {
					txt := m.TXTName(name, typ)
					gotName, gotType := m.EndpointName(txt)
					if gotName != want || gotType != typ {
						t.Errorf("%+v wildcard %q: %s %s -> %q -> (%q, %q), want (%q, %q)", a, wildcard, name, typ, txt, gotName, gotType, want, typ)
					}
					if !slices.Contains(m.RecordNames(txt), name) {
						t.Errorf("%+v wildcard %q: recordNames(%q) = %q, lacks %q", a, wildcard, txt, m.RecordNames(txt), name)
					}
				}
				old := m.OldTXTName(name)
				if a.prefix != "" || a.suffix != "" || wildcard != "" && strings.HasPrefix(name, "*.") {
					if !slices.Contains(m.RecordNames(old), name) {
						t.Errorf("%+v wildcard %q: recordNames(old %q) = %q, lacks %q", a, wildcard, old, m.RecordNames(old), name)
					}
				}
			}
		}
	}
}
