package events

import (
	"strings"
	"testing"
)

func TestNameTokensReverseLabels(t *testing.T) {
	cases := map[string]string{
		"api.example.com":   "com.example.api",
		"API.Example.COM.":  "com.example.api",
		"*.example.com":     "com.example.%2A",
		"_sip._tcp.example": "example._tcp._sip",
		"a>b.example":       "example.a%3Eb",
		"100%.example":      "example.100%25",
		"example":           "example",
		"":                  "%",
	}
	for in, want := range cases {
		if got := NameTokens(in); got != want {
			t.Errorf("NameTokens(%q) = %q, want %q", in, got, want)
		}
	}
	if got := DesiredSubject("api.example.com"); got != "zs.desired.com.example.api" {
		t.Errorf("DesiredSubject = %q", got)
	}
	if got := SourceSubject("eu-1", "ingress", "default", "web.v2"); got != "zs.src.eu-1.ingress.default.web%2Ev2" {
		t.Errorf("SourceSubject = %q", got)
	}
}

func TestMarkersNeverCollideWithNames(t *testing.T) {
	if !IsMarker(CollectorSubject("eu", "service")) || !IsMarker(ClaimSubject("eu")) || !IsMarker(DesiredCompleteSubject()) {
		t.Fatal("markers not recognised")
	}
	for _, s := range []string{SourceSubject("eu", "service", "ns", "~synced"), SourceSubject("~claim", "a", "b", "c"),
		DesiredSubject("~complete"), DesiredSubject("a.b")} {
		if IsMarker(s) {
			t.Errorf("%s taken for a marker", s)
		}
	}
}

func TestUnescapeRejectsNonCanonical(t *testing.T) {
	for _, bad := range []string{"%4", "%zz", "%61", "a.b", "a*", "%2a"} {
		if _, err := UnescapeToken(bad); err == nil {
			t.Errorf("UnescapeToken(%q) accepted a token EscapeToken never produces", bad)
		}
	}
}

// FuzzTokenRoundTrip checks that every string survives escaping and that the
// escaped form is always one valid, wildcard-free subject token.
func FuzzTokenRoundTrip(f *testing.F) {
	for _, s := range []string{"", "*", ">", ".", "%", "a.b", "ü", "%25", "_x-y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok := EscapeToken(s)
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsAny(tok, ". \t\r\n") {
			t.Fatalf("EscapeToken(%q) = %q is not a single literal token", s, tok)
		}
		back, err := UnescapeToken(tok)
		if err != nil || back != s {
			t.Fatalf("round trip %q -> %q -> %q, %v", s, tok, back, err)
		}
	})
}

func FuzzNameRoundTrip(f *testing.F) {
	for _, s := range []string{"api.example.com", "*.a.b", "a..b", "x", "foo .", "foo. .", " A.\u0085"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		once := NormalizeName(name)
		if twice := NormalizeName(once); twice != once {
			t.Fatalf("NormalizeName is not idempotent: %q -> %q -> %q", name, once, twice)
		}
		name = once
		back, err := NameFromTokens(NameTokens(name))
		if err != nil || back != name {
			t.Fatalf("round trip %q -> %q -> %q, %v", name, NameTokens(name), back, err)
		}
	})
}

// TestSourceSubjectIsTheIdentity: the object a subject names is read back
// exactly, and nothing else parses as an object.
func TestSourceSubjectIsTheIdentity(t *testing.T) {
	ref := ObjectRef{Cluster: "eu-1", Source: "crd", Namespace: "", Name: "web.v2"}
	got, err := ParseSourceSubject(ref.Subject())
	if err != nil || got != ref {
		t.Fatalf("ParseSourceSubject(%q) = %+v, %v; want %+v", ref.Subject(), got, err, ref)
	}
	for _, bad := range []string{CollectorSubject("eu", "service"), ClaimSubject("eu"), "zs.src.a.b.c", "zs.desired.a.b.c.d", "zs.src.a.b.c.d%"} {
		if _, err := ParseSourceSubject(bad); err == nil {
			t.Errorf("ParseSourceSubject(%q) accepted", bad)
		}
	}
}
