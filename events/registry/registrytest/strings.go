// Package registrytest is the table of TXT strings every reader of the
// registry is tested against, so that the planner, the status writer and
// the portal are shown to read each the same way.
package registrytest

import (
	"slices"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/registry"
)

// Key is the AES key the encrypted strings of Strings are sealed with
// (ExternalDNS' own test key).
const Key = "ZPitL0NGVQBZbTD6DwXJzD8RiStSazzYXQsdUowLURY="

// String is one TXT string and what it says.
type String struct {
	TXT string
	// OK: it is a registry string; Labels are what it says.
	OK     bool
	Labels registry.Labels
	// Encrypted: sealed with Key; a reader without it cannot tell whose.
	Encrypted bool
}

// Strings are the cases: ExternalDNS' own parser tests, the extended
// registry's record-type fields, and the strings readers used to disagree
// on (another heritage beside ours, a token with two '=').
func Strings() []String {
	enc := func(plain string) string {
		key, err := registry.ParseAESKey(Key)
		if err != nil {
			panic(err)
		}
		s, err := registry.Encrypt(plain, key, slices.Repeat([]byte{7}, 12))
		if err != nil {
			panic(err)
		}
		return s
	}
	plain := "heritage=external-dns,external-dns/owner=enc-owner,external-dns/resource=service/ns/enc"
	return []String{
		{TXT: `"heritage=external-dns,external-dns/owner=foo-owner,external-dns/resource=foo-resource"`, OK: true,
			Labels: registry.Labels{Owner: "foo-owner", Resource: "foo-resource"}},
		// ExternalDNS' own test: gibberish tokens are skipped.
		{TXT: "heritage=external-dns,,external-dns/owner=bar-owner,external-dns/resource=bar-resource,external-dns/new-key=bar-new-key,random=stuff,no-equal-sign,,", OK: true,
			Labels: registry.Labels{Owner: "bar-owner", Resource: "bar-resource"}},
		{TXT: "external-dns/owner=random-owner"},
		{TXT: "heritage=mate,external-dns/owner=random-owner"},
		{TXT: "heritage=mate,heritage=external-dns,external-dns/owner=random-owner"},
		{TXT: "heritage=external-dns,heritage=mate,external-dns/owner=random-owner"},
		{TXT: "v=spf1 include:example.net -all"},
		{TXT: "heritage=external-dns,external-dns/owner=a=b,external-dns/resource=service/ns/x", OK: true,
			Labels: registry.Labels{Resource: "service/ns/x"}},
		{TXT: "heritage=external-dns,external-dns/resource=service/ns/x", OK: true,
			Labels: registry.Labels{Resource: "service/ns/x"}},
		{TXT: "heritage=external-dns,external-dns/owner=usc1f-int,external-dns/resource=ingress/brand/app-fe,record-type/A=managed,record-type/AAAA=managed", OK: true,
			Labels: registry.Labels{Owner: "usc1f-int", Resource: "ingress/brand/app-fe", Types: []string{"A", "AAAA"}}},
		{TXT: "heritage=external-dns,external-dns/owner=x,record-type/aaaa=managed,record-type/A=managed,record-type/MX=other", OK: true,
			Labels: registry.Labels{Owner: "x", Types: []string{"A", "AAAA"}}},
		{TXT: enc(plain), OK: true, Encrypted: true,
			Labels: registry.Labels{Owner: "enc-owner", Resource: "service/ns/enc"}},
		{TXT: `"` + enc(plain) + `"`, OK: true, Encrypted: true,
			Labels: registry.Labels{Owner: "enc-owner", Resource: "service/ns/enc"}},
	}
}

// Owner is the owner a reader without the key must read from s; ok is
// false when s is no registry string.
func (s String) Owner() (owner string, ok bool) {
	if s.Encrypted {
		return registry.Unreadable, true
	}
	return s.Labels.Owner, s.OK
}

// CheckOwners has a reader without the key, which reads the ownership
// record holding one string, read every string of the table; it must read
// each as Owner says.
func CheckOwners(t testing.TB, reader string, read func(record events.Endpoint) (owner string, ok bool)) {
	t.Helper()
	for _, s := range Strings() {
		owner, ok := read(events.NewEndpoint("a-www.example.org", events.RecordTypeTXT, 300, s.TXT))
		if wantOwner, wantOK := s.Owner(); owner != wantOwner || ok != wantOK {
			t.Errorf("%s(%q) = %q %v, want %q %v", reader, s.TXT, owner, ok, wantOwner, wantOK)
		}
	}
}
