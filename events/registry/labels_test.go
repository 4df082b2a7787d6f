package registry_test

import (
	"testing"

	"github.com/zonestream/zonestream/events/registry"
	"github.com/zonestream/zonestream/events/registry/registrytest"
)

func TestParseOwnershipIsExternalDNS(t *testing.T) {
	for _, c := range registrytest.Strings() {
		if c.Encrypted {
			continue
		}
		got, ok := registry.Parse(c.TXT)
		if ok != c.OK || !got.Same(c.Labels) {
			t.Errorf("registry.Parse(%q) = %+v %v, want %+v %v", c.TXT, got, ok, c.Labels, c.OK)
		}
	}
	if s := (registry.Labels{Owner: "o", Resource: "ingress/ns/x", Types: []string{"A", "AAAA"}}).Format(); s != "heritage=external-dns,external-dns/owner=o,external-dns/resource=ingress/ns/x,record-type/A=managed,record-type/AAAA=managed" {
		t.Errorf("format with types: %q", s)
	}
	o := registry.Labels{Owner: "o", Types: []string{"A"}}
	if !o.Covers("A", true) || o.Covers("CNAME", true) || o.Covers("CNAME", false) {
		t.Error("record-type fields must limit coverage")
	}
	o.Types = nil
	if o.Covers("AAAA", true) || !o.Covers("AAAA", false) || !o.Covers("CNAME", true) {
		t.Error("without fields: an old-format string covers all but AAAA, a new-format one its type")
	}
}

func TestRegistryFormatIsExternalDNS(t *testing.T) {
	got := registry.Labels{Owner: "cluster-a", Resource: "service/default/nginx"}.Format()
	want := "heritage=external-dns,external-dns/owner=cluster-a,external-dns/resource=service/default/nginx"
	if got != want {
		t.Fatalf("Labels string %q, want ExternalDNS' %q", got, want)
	}
	o, ok := registry.Parse(`"` + want + `"`)
	if !ok || o.Owner != "cluster-a" || o.Resource != "service/default/nginx" {
		t.Fatalf("parse: %+v %v", o, ok)
	}
	if _, ok := registry.Parse("v=spf1 include:example.net -all"); ok {
		t.Fatal("an SPF record parsed as Labels")
	}
}

// Every reader reads the table alike: with the key, an encrypted string is
// what it seals; without it, Owner says it may be anyone's.
func TestReadersAgreeOnTheTable(t *testing.T) {
	key, err := registry.ParseAESKey(registrytest.Key)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range registrytest.Strings() {
		got, ok := registry.Read(c.TXT, key)
		if ok != c.OK || !got.Same(c.Labels) {
			t.Errorf("Read(%q) = %+v %v, want %+v %v", c.TXT, got, ok, c.Labels, c.OK)
		}
		owner, ok := registry.Owner(c.TXT)
		if wantOwner, wantOK := c.Owner(); owner != wantOwner || ok != wantOK {
			t.Errorf("Owner(%q) = %q %v, want %q %v", c.TXT, owner, ok, wantOwner, wantOK)
		}
	}
}
