package crdregistry

import (
	"regexp"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/events"
)

func key(name, recordType, setID string) events.RRsetKey {
	return events.RRsetKey{DNSName: name, RecordType: recordType, SetIdentifier: setID}
}

// TestObjectNameExternalDNSVectors: the names ExternalDNS gives
// (registry/crd recordObjectName, v0.23). "record-6fbee3c6" is its own
// test's; the others are sha256("name/TYPE/set-id") computed apart from
// this code (python3 hashlib), first 4 bytes in hex.
func TestObjectNameExternalDNSVectors(t *testing.T) {
	for _, tc := range []struct {
		key  events.RRsetKey
		want string
	}{
		{key("...", "A", ""), "record-6fbee3c6"}, // crd_test.go: no valid character left
		{key("sub.example.io", "A", ""), "sub-example-io-0df74740"},
		{key("SUB.example.io.", "a", ""), "sub-example-io-0df74740"}, // case and trailing dot do not matter
		{key("sub.example.io", "A", "eu"), "sub-example-io-143760fe"},
		{key("sub-example.io", "A", ""), "sub-example-io-1c730bef"},
		{key("www.example.org", "A", ""), "www-example-org-dab90c7f"},
		{key("_dmarc.example.io", "TXT", ""), "dmarc-example-io-b5715c14"},
	} {
		if got := ObjectName(tc.key); got != tc.want {
			t.Errorf("ObjectName(%v) = %q, want %q", tc.key, got, tc.want)
		}
	}
}

// rfc1123Subdomain is Kubernetes' IsDNS1123Subdomain.
var rfc1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// TestObjectNameIsAnObjectName: ExternalDNS' cases of names that are
// valid object names, and of identities that must not collide.
func TestObjectNameIsAnObjectName(t *testing.T) {
	for _, k := range []events.RRsetKey{
		key("sub.example.io", "A", ""),
		key("*.example.io", "A", ""),
		key("_dmarc.example.io", "TXT", ""),
		key("example.io.", "A", ""),
		key(strings.Repeat("a.", 200)+"example.io", "A", ""),
	} {
		name := ObjectName(k)
		if len(name) > 253 || !rfc1123Subdomain.MatchString(name) {
			t.Errorf("ObjectName(%v) = %q (%d characters): not an RFC 1123 subdomain", k.DNSName, name, len(name))
		}
	}
	for _, pair := range [][2]events.RRsetKey{
		{key("sub.example.io", "A", "eu"), key("sub.example.io", "A", "us")},
		{key("sub.example.io", "A", ""), key("sub-example.io", "A", "")},
		{key("sub.example.io", "A", ""), key("sub.example.io", "AAAA", "")},
	} {
		if ObjectName(pair[0]) == ObjectName(pair[1]) {
			t.Errorf("%v and %v share the object name %q", pair[0], pair[1], ObjectName(pair[0]))
		}
	}
}
