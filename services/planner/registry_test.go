package planner

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/events/registry/registrytest"
)

// Both ways with registry strings: what we write is base64(nonce||sealed
// gzip) that decrypts to ExternalDNS' plain string; it is deterministic.
func TestEncryptedRegistryStrings(t *testing.T) {
	key, _ := registry.ParseAESKey("ZPitL0NGVQBZbTD6DwXJzD8RiStSazzYXQsdUowLURY=")
	reg := testRegistry(txtRegistry{aesKey: key, encrypt: true})
	o := registry.Labels{Owner: "owner-1", Resource: "ingress/default/foo-127"}
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
	plain, nonce, err := registry.Decrypt(s, key)
	if err != nil || plain != "heritage=external-dns,external-dns/owner=owner-1,external-dns/resource=ingress/default/foo-127" {
		t.Fatalf("decrypt: %q %v", plain, err)
	}
	if !strings.HasPrefix(s, base64.StdEncoding.EncodeToString(nonce)[:16]) {
		t.Fatal("the nonce leads the encoded text")
	}
	got, ok := reg.parse(s)
	if !ok || !got.Same(o) {
		t.Fatalf("parse encrypted: %+v %v", got, ok)
	}
	// A plain string is still read with a key set; a key without
	// --txt-encrypt-enabled writes plain.
	if got, ok := reg.parse(o.Format()); !ok || !got.Same(o) {
		t.Fatal("plain strings must be read with a key set")
	}
	if s := testRegistry(txtRegistry{aesKey: key}).render(o, "x"); s != o.Format() {
		t.Fatalf("without --txt-encrypt-enabled, plain: %q", s)
	}
	// Another key: not ours to read, so not a registry string.
	other, _ := registry.ParseAESKey("01234567890123456789012345678901")
	if _, ok := testRegistry(txtRegistry{aesKey: other}).parse(s); ok {
		t.Fatal("a string under another key must not parse")
	}
}

func TestConfigValidation(t *testing.T) {
	base := func() Config {
		return Config{Ownership: registry.Settings{OwnerID: "me"}, Policy: "sync", Registry: "txt", BatchChangeSize: 10}
	}
	bad := map[string]func(*Config){
		"prefix and suffix":    func(c *Config) { c.Ownership.Prefix, c.Ownership.Suffix = "p.", "-s" },
		"encrypt without key":  func(c *Config) { c.TXTEncryptEnabled = true },
		"short key":            func(c *Config) { c.TXTEncryptAESKey = "short" },
		"unknown registry":     func(c *Config) { c.Registry = "dynamodb" },
		"adopt owner w/ comma": func(c *Config) { c.TXTAdoptOwners = []string{"a,b"} },
		"bad regex":            func(c *Config) { c.Domains.Regex = "(" },
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

// The planner reads every string of the registry's table as the registry
// does, encrypted ones with the key.
func TestReadsTheRegistryTableAsTheRegistryDoes(t *testing.T) {
	key, err := registry.ParseAESKey(registrytest.Key)
	if err != nil {
		t.Fatal(err)
	}
	reg := testRegistry(txtRegistry{aesKey: key})
	for _, c := range registrytest.Strings() {
		if got, ok := reg.parse(c.TXT); ok != c.OK || !got.Same(c.Labels) {
			t.Errorf("parse(%q) = %+v %v, want %+v %v", c.TXT, got, ok, c.Labels, c.OK)
		}
	}
}
