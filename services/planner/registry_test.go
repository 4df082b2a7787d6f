package planner

import (
	"bytes"
	"encoding/base64"
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
		m := newNameMapper(c.prefix, c.suffix, c.wildcard)
		if got := m.txtName(c.name, c.typ); got != c.newName {
			t.Errorf("%+v: txtName = %q, want %q", c, got, c.newName)
		}
		if got := m.oldTXTName(c.name); got != c.oldName {
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
			m := newNameMapper(a.prefix, a.suffix, wildcard)
			for _, name := range names {
				want := name
				if wildcard != "" && strings.HasPrefix(name, "*.") {
					want = wildcard + name[1:]
				}
				for _, typ := range []string{"A", "AAAA", "CNAME", "MX", "SRV", "NS"} {
					txt := m.txtName(name, typ)
					gotName, gotType := m.endpointName(txt)
					if gotName != want || gotType != typ {
						t.Errorf("%+v wildcard %q: %s %s -> %q -> (%q, %q), want (%q, %q)", a, wildcard, name, typ, txt, gotName, gotType, want, typ)
					}
					if !slices.Contains(m.recordNames(txt), name) {
						t.Errorf("%+v wildcard %q: recordNames(%q) = %q, lacks %q", a, wildcard, txt, m.recordNames(txt), name)
					}
				}
				old := m.oldTXTName(name)
				if a.prefix != "" || a.suffix != "" || wildcard != "" && strings.HasPrefix(name, "*.") {
					if !slices.Contains(m.recordNames(old), name) {
						t.Errorf("%+v wildcard %q: recordNames(old %q) = %q, lacks %q", a, wildcard, old, m.recordNames(old), name)
					}
				}
			}
		}
	}
}

func TestParseOwnershipIsExternalDNS(t *testing.T) {
	cases := []struct {
		in   string
		ok   bool
		want ownership
	}{
		{`"heritage=external-dns,external-dns/owner=foo-owner,external-dns/resource=foo-resource"`, true, ownership{owner: "foo-owner", resource: "foo-resource"}},
		// ExternalDNS' own test: gibberish tokens are skipped.
		{"heritage=external-dns,,external-dns/owner=bar-owner,external-dns/resource=bar-resource,external-dns/new-key=bar-new-key,random=stuff,no-equal-sign,,", true, ownership{owner: "bar-owner", resource: "bar-resource"}},
		{"external-dns/owner=random-owner", false, ownership{}},
		{"heritage=mate,external-dns/owner=random-owner", false, ownership{}},
		{"heritage=mate,heritage=external-dns,external-dns/owner=random-owner", false, ownership{}},
		{"v=spf1 include:example.net -all", false, ownership{}},
		// reference 004
		{"heritage=external-dns,external-dns/owner=usc1f-int,external-dns/resource=ingress/brand/app-fe,record-type/A=managed,record-type/AAAA=managed", true,
			ownership{owner: "usc1f-int", resource: "ingress/brand/app-fe", types: []string{"A", "AAAA"}}},
		{"heritage=external-dns,external-dns/owner=x,record-type/aaaa=managed,record-type/A=managed,record-type/MX=other", true,
			ownership{owner: "x", types: []string{"A", "AAAA"}}},
	}
	for _, c := range cases {
		got, ok := parseOwnership(c.in)
		if ok != c.ok || !got.same(c.want) {
			t.Errorf("parse(%q) = %+v %v, want %+v %v", c.in, got, ok, c.want, c.ok)
		}
	}
	if s := (ownership{owner: "o", resource: "ingress/ns/x", types: []string{"A", "AAAA"}}).format(); s != "heritage=external-dns,external-dns/owner=o,external-dns/resource=ingress/ns/x,record-type/A=managed,record-type/AAAA=managed" {
		t.Errorf("format with types: %q", s)
	}
	o := ownership{owner: "o", types: []string{"A"}}
	if !o.covers("A", true) || o.covers("CNAME", true) || o.covers("CNAME", false) {
		t.Error("record-type fields must limit coverage")
	}
	o.types = nil
	if o.covers("AAAA", true) || !o.covers("AAAA", false) || !o.covers("CNAME", true) {
		t.Error("without fields: an old-format string covers all but AAAA, a new-format one its type")
	}
}

func TestAESKeyAsExternalDNS(t *testing.T) {
	// ExternalDNS' TestNewTXTRegistryEncryptionConfig.
	k, err := parseAESKey("passphrasewhichneedstobe32bytes!")
	if err != nil || string(k) != "passphrasewhichneedstobe32bytes!" {
		t.Fatalf("raw key: %q %v", k, err)
	}
	k, err = parseAESKey("ZPitL0NGVQBZbTD6DwXJzD8RiStSazzYXQsdUowLURY=")
	want := []byte{100, 248, 173, 47, 67, 70, 85, 0, 89, 109, 48, 250, 15, 5, 201, 204, 63, 17, 137, 43, 82, 107, 60, 216, 93, 11, 29, 82, 140, 11, 81, 22}
	if err != nil || !bytes.Equal(k, want) {
		t.Fatalf("base64 key: %v %v", k, err)
	}
	if _, err := parseAESKey("123456789012345678901234567890asdfasdfasdfasdfa12"); err == nil {
		t.Fatal("a 49-byte key must be refused")
	}
}

// The vector of ExternalDNS' endpoint/crypto_test.go (TestEncrypt).
func TestDecryptExternalDNSVector(t *testing.T) {
	key := []byte("s%zF`.*'5`9.AhI2!B,.~hmbs^.*TL?;")
	plaintext := "Lorem Ipsum is simply dummy text of the printing and typesetting industry. Lorem Ipsum has been the industry's standard dummy text ever since the 1500s, when an unknown printer took a galley of type and scrambled it to make a type specimen book. It has survived not only five centuries, but also the leap into electronic typesetting, remaining essentially unchanged. It was popularised in the 1960s with the release of Letraset sheets containing Lorem Ipsum passages, and more recently with desktop publishing software like Aldus PageMaker including versions of Lorem Ipsum."
	enc := "0Mfzf6wsN8llrfX0ucDZ6nlc2+QiQfKKedjPPLu5atb2I35L9nUZeJcCnuLVW7CVW3K0h94vSuBLdXnMrj8Vcm0M09shxaoF48IcCpD03XtQbKXqk2hPbsW6+JybvplHIQGr16/PcjUSObGmR9yjf38+qEltApkKvrPjsyw43BX4eE10rL0Bln33UJD7/w+zazRDPFlAcbGtkt0ETKHnvyB3/aCddLipvrhjCXj2ZY/ktRF6h716kJRgXU10dCIQHFYU45MIdxI+k10HK3yZqhI2V0Gp2xjrFV/LRQ7/OS9SFee4asPWUYxbCEsnOzp8qc0dCPFSo1dtADzWnUZnsAcbnjtudT4milfLJc5CxDk1v3ykqQ/ajejwHjWQ7b8U6AsTErbezfdcqrb5IzkLgHb5TosnfrdDmNc9GcKfpsrCHbVY8KgNwMVdtwavLv7d9WM6sooUlZ3t0sABGkzagXQmPRvwLnkSOlie5XrnzWo8/8/4UByLga29CaXO"
	got, nonce, err := decryptText(enc, key)
	if err != nil || got != plaintext {
		t.Fatalf("decrypt: %q %v", got, err)
	}
	raw, _ := base64.StdEncoding.DecodeString(enc)
	if !bytes.Equal(nonce, raw[:12]) {
		t.Fatal("the nonce is the first 12 bytes")
	}
	// Quoted, as in ExternalDNS' endpoint target.
	if got, _, err := decryptText(`"`+enc+`"`, key); err != nil || got != plaintext {
		t.Fatalf("quoted: %v", err)
	}
	if _, _, err := decryptText(enc, []byte("s'J!jD`].LC?g&Oa11AgTub,j48ts/96")); err == nil {
		t.Fatal("a wrong key must fail")
	}
	if _, _, err := decryptText(plaintext, key); err == nil {
		t.Fatal("plain text must fail")
	}
	// Our encryption of the same text with the vector's own nonce opens
	// to the same plain text (the gzip bytes may differ between Go
	// versions, so the ciphertext is not compared).
	again, err := encryptText(plaintext, key, nonce)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := decryptText(again, key); err != nil || got != plaintext {
		t.Fatalf("re-encrypted: %v", err)
	}
}

// Both ways with registry strings: what we write is base64(nonce||sealed
// gzip) that decrypts to ExternalDNS' plain string; it is deterministic.
func TestEncryptedRegistryStrings(t *testing.T) {
	key, _ := parseAESKey("ZPitL0NGVQBZbTD6DwXJzD8RiStSazzYXQsdUowLURY=")
	reg := testRegistry(registry{aesKey: key, encrypt: true})
	o := ownership{owner: "owner-1", resource: "ingress/default/foo-127"}
	s := reg.render(o, "cname-bar.example.org")
	if s != reg.render(o, "cname-bar.example.org") {
		t.Fatal("encryption must be deterministic for the same name and content")
	}
	if s == reg.render(o, "a-bar.example.org") {
		t.Fatal("different names must get different nonces")
	}
	if strings.Contains(s, "heritage") || strings.Contains(s, `"`) {
		t.Fatalf("not encrypted or quoted: %q", s)
	}
	plain, nonce, err := decryptText(s, key)
	if err != nil || plain != "heritage=external-dns,external-dns/owner=owner-1,external-dns/resource=ingress/default/foo-127" {
		t.Fatalf("decrypt: %q %v", plain, err)
	}
	if !strings.HasPrefix(s, base64.StdEncoding.EncodeToString(nonce)[:16]) {
		t.Fatal("the nonce leads the encoded text")
	}
	got, ok := reg.parse(s)
	if !ok || !got.same(o) {
		t.Fatalf("parse encrypted: %+v %v", got, ok)
	}
	// A plain string is still read with a key set; a key without
	// --txt-encrypt-enabled writes plain.
	if got, ok := reg.parse(o.format()); !ok || !got.same(o) {
		t.Fatal("plain strings must be read with a key set")
	}
	if s := testRegistry(registry{aesKey: key}).render(o, "x"); s != o.format() {
		t.Fatalf("without --txt-encrypt-enabled, plain: %q", s)
	}
	// Another key: not ours to read, so not a registry string.
	other, _ := parseAESKey("01234567890123456789012345678901")
	if _, ok := testRegistry(registry{aesKey: other}).parse(s); ok {
		t.Fatal("a string under another key must not parse")
	}
}

func TestRegexDomainFilter(t *testing.T) {
	f, err := newDomainFilter([]string{"example.com"}, nil, `(^|\.)example\.org$`, `^private\.`)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"www.example.org": true, "example.org": true, "private.example.org": false,
		"www.example.com":  false, // the regex replaces the plain filter
		"WWW.Example.ORG.": true,
	} {
		if got := f.match(name); got != want {
			t.Errorf("match(%q) = %v, want %v", name, got, want)
		}
	}
	f, _ = newDomainFilter([]string{"example.com"}, nil, "", `^skip\.`)
	if !f.match("www.example.net") || f.match("skip.example.com") {
		t.Error("an exclusion alone: everything but the exclusion")
	}
	if _, err := newDomainFilter(nil, nil, "(", ""); err == nil {
		t.Error("a bad regex must be refused")
	}
}

func TestConfigValidation(t *testing.T) {
	base := func() Config {
		return Config{TXTOwnerID: "me", Policy: "sync", Registry: "txt", BatchChangeSize: 10}
	}
	bad := map[string]func(*Config){
		"prefix and suffix":    func(c *Config) { c.TXTPrefix, c.TXTSuffix = "p.", "-s" },
		"encrypt without key":  func(c *Config) { c.TXTEncryptEnabled = true },
		"short key":            func(c *Config) { c.TXTEncryptAESKey = "short" },
		"unknown registry":     func(c *Config) { c.Registry = "dynamodb" },
		"adopt owner w/ comma": func(c *Config) { c.TXTAdoptOwners = []string{"a,b"} },
		"bad regex":            func(c *Config) { c.RegexDomainFilter = "(" },
	}
	for name, mod := range bad {
		c := base()
		mod(&c)
		if _, err := New(c, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c := base()
	c.Registry, c.ExcludeRecordTypes, c.ManagedRecordTypes = "noop", []string{"cname"}, []string{"A", "CNAME", "TXT"}
	p, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.managed, []string{"A", "TXT"}) || !p.reg.noop {
		t.Errorf("managed %v noop %v: --exclude-record-types is taken out, TXT stays managed", p.managed, p.reg.noop)
	}
}
