package externaldns

import (
	"slices"
	"testing"

	"github.com/zonestream/zonestream/stage"
)

// TestParseRemembersExternalDNSSecrets: the values of ExternalDNS' secure
// flags are remembered for redaction, the others are not.
func TestParseRemembersExternalDNSSecrets(t *testing.T) {
	if _, err := Parse([]string{"--provider=pdns", "--pdns-api-key=edns-pdns-key-1", "--pdns-server=http://192.0.2.1:8081",
		"--rfc2136-tsig-secret=edns-tsig-secret-2"}); err != nil {
		t.Fatal(err)
	}
	got := stage.Secrets()
	for _, want := range []string{"edns-pdns-key-1", "edns-tsig-secret-2"} {
		if !slices.Contains(got, want) {
			t.Errorf("%q not remembered: %q", want, got)
		}
	}
	if slices.Contains(got, "http://192.0.2.1:8081") {
		t.Error("a plain flag was remembered as a secret")
	}
}
