package provider_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/stage"
)

// TestRedact: every kind of credential an error may carry is masked, the
// rest of the text is kept, and redacting twice changes nothing.
func TestRedact(t *testing.T) {
	stage.RememberSecret("s3cr3t-value+/=")
	for _, c := range []struct{ in, want, secret string }{
		{`POST http://user:pa55@hook:8888/records: HTTP 500`, `POST http://user:xxxxx@hook:8888/records: HTTP 500`, "pa55"},
		{`Get "https://T0KEN@api.example/v1": EOF`, `Get "https://xxxxx@api.example/v1": EOF`, "T0KEN"},
		{`GET http://hook/records?zone=a&token=abc123&x=1: HTTP 403`, `GET http://hook/records?zone=a&token=[redacted]&x=1: HTTP 403`, "abc123"},
		{`?api_key=k1&apikey=k2&access_token=k3&X-Amz-Signature=k4&sig=k5&password=k6&client_secret=k7`,
			`?api_key=[redacted]&apikey=[redacted]&access_token=[redacted]&X-Amz-Signature=[redacted]&sig=[redacted]&password=[redacted]&client_secret=[redacted]`, "k1"},
		{`denied: Authorization: Bearer eyJhbGci.x.y`, `denied: Authorization: Bearer [redacted]`, "eyJhbGci"},
		{`header X-API-Key: 0123abcd was refused`, `header X-API-Key: [redacted] was refused`, "0123abcd"},
		{`map[Authorization:[Basic dXNlcjpwYXNz] X-Api-Key:[zzz9]]`, `map[Authorization:[Basic [redacted]] X-Api-Key:[[redacted]]]`, "dXNlcjpwYXNz"},
		{`{"error":"bad","password":"hunter22"}`, `{"error":"bad","password":"[redacted]"}`, "hunter22"},
		{`server said: s3cr3t-value+/= is wrong`, `server said: [redacted] is wrong`, "s3cr3t"},
		{`in a URL: s3cr3t-value%2B%2F%3D`, `in a URL: [redacted]`, "s3cr3t"},
		{`rfc2136: update example.org at 127.0.0.1:53: dns: bad signature`, `rfc2136: update example.org at 127.0.0.1:53: dns: bad signature`, ""},
		{`tsig: zone example.org key zonestream-key.`, `tsig: zone example.org key zonestream-key.`, ""},
	} {
		got := provider.Redact(c.in)
		if got != c.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
		if c.secret != "" && strings.Contains(got, c.secret) {
			t.Errorf("Redact(%q) keeps %q", c.in, c.secret)
		}
		if again := provider.Redact(got); again != got {
			t.Errorf("Redact twice: %q, then %q", got, again)
		}
	}
}

// TestRedactErrorKeepsWhatItWraps: the applier tells stale from permanent
// from transient with errors.Is, and reads a partial apply's count.
func TestRedactErrorKeepsWhatItWraps(t *testing.T) {
	err := provider.RedactError(&provider.PartialError{Applied: 2, Err: provider.Permanent(errors.New("GET http://u:pw99@h/: HTTP 400"))})
	if !errors.Is(err, provider.ErrPermanent) || provider.AppliedCount(err) != 2 || strings.Contains(err.Error(), "pw99") {
		t.Fatalf("redacted %v: permanent %v, applied %d", err, errors.Is(err, provider.ErrPermanent), provider.AppliedCount(err))
	}
	if provider.RedactError(nil) != nil {
		t.Fatal("nil became an error")
	}
}
