package events

import (
	"reflect"
	"testing"
)

// What is packed unpacks to the same value, endpoints' own codec and
// pointers included; no bytes unpack to the zero value.
func TestPackedRoundTrips(t *testing.T) {
	old := NewEndpoint("www.example.org", "A", 300, "10.0.0.1")
	updated := NewEndpoint("www.example.org", "A", 300, "10.0.0.2")
	updated.Labels = map[string]string{"owner": "default"}
	owner := NewEndpoint("a-www.example.org", "TXT", 0, "heritage=external-dns,external-dns/owner=default")
	changes := []Change{{Old: &old, New: &updated}, {New: &owner}, {Old: &owner}}
	p, err := Pack(changes)
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Unpack()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, changes) {
		t.Fatalf("unpacked %+v, packed %+v", got, changes)
	}
	var none Packed[[]Change]
	if got, err := none.Unpack(); err != nil || got != nil {
		t.Fatalf("no bytes unpacked to %v, %v; want nil", got, err)
	}
	if _, err := Packed[[]Change]([]byte{0xc1}).Unpack(); err == nil {
		t.Fatal("garbage unpacked without an error")
	}
}
