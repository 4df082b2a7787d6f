package events

import (
	"encoding/json"
	"testing"
)

func TestHashIgnoresOrder(t *testing.T) {
	ref := ObjectRef{Cluster: "c", Source: "service", Namespace: "ns", Name: "web"}
	a := &SourceState{Object: ref, Endpoints: []Endpoint{
		{DNSName: "b.example.com", RecordType: "A", Targets: []string{"10.0.0.2", "10.0.0.1"}},
		{DNSName: "A.example.com.", RecordType: "aaaa", Targets: []string{"::1"}},
	}}
	b := &SourceState{Object: ref, Endpoints: []Endpoint{
		{DNSName: "a.example.com", RecordType: "AAAA", Targets: []string{"::1"}},
		{DNSName: "b.example.com", RecordType: "A", Targets: []string{"10.0.0.1", "10.0.0.2", "10.0.0.1"}},
	}}
	ha, err := HashOf(a)
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := HashOf(b)
	if ha != hb {
		t.Fatalf("same content, different hashes: %s %s", ha, hb)
	}
	b.Endpoints[1].Targets = []string{"10.0.0.3"}
	if hc, _ := HashOf(b); hc == ha {
		t.Fatal("different targets, same hash")
	}
}

func TestMessageRoundTripAndDecode(t *testing.T) {
	in := &DesiredState{DNSName: "api.example.com",
		Endpoints:    []Endpoint{NewEndpoint("api.example.com", "A", 60, "192.0.2.1")},
		Contributors: []ObjectRef{{Cluster: "c", Source: "service", Namespace: "d", Name: "api"}}}
	msg, err := Message(DesiredSubject(in.DNSName), in, "cause-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{HeaderContentType, HeaderSchema, HeaderHash, HeaderEventID, HeaderCausation} {
		if msg.Header.Get(h) == "" {
			t.Errorf("header %s missing", h)
		}
	}
	var out DesiredState
	if err := Unmarshal(msg.Header, msg.Data, &out); err != nil {
		t.Fatal(err)
	}
	if out.DNSName != in.DNSName || len(out.Endpoints) != 1 || out.Endpoints[0].RecordTTL != 60 {
		t.Fatalf("round trip lost data: %+v", out)
	}
	var wrong SourceState
	if err := Unmarshal(msg.Header, msg.Data, &wrong); err == nil {
		t.Fatal("decoding a desired event as a source event must fail on the schema header")
	}
	js, err := ToJSON(msg.Data)
	if err != nil {
		t.Fatal(err)
	}
	var generic map[string]any
	if err := json.Unmarshal(js, &generic); err != nil {
		t.Fatal(err)
	}
	if generic["dnsName"] != "api.example.com" {
		t.Fatalf("decode to JSON: %s", js)
	}
	if _, err := ToJSON([]byte{0xc1}); err == nil {
		t.Fatal("garbage must not decode")
	}
}

func TestNormalizeCanonicalTargets(t *testing.T) {
	a := NewEndpoint("X.example.com.", "aaaa", 0, "2001:DB8:0:0::1", "2001:db8::1")
	if a.DNSName != "x.example.com" || a.RecordType != "AAAA" || len(a.Targets) != 1 || a.Targets[0] != "2001:db8::1" {
		t.Fatalf("AAAA not canonical: %+v", a)
	}
	c := NewEndpoint("x.example.com", "CNAME", 0, "LB.Example.NET.")
	if c.Targets[0] != "lb.example.net" {
		t.Fatalf("CNAME target not canonical: %+v", c)
	}
	srv := NewEndpoint("_web._tcp.x.example.com", "SRV", 0, "0  50 30080 Node-1.Example.com.")
	if srv.Targets[0] != "0 50 30080 node-1.example.com" {
		t.Fatalf("SRV target not canonical: %+v", srv)
	}
	txt := NewEndpoint("x.example.com", "TXT", 0, "Case Matters.")
	if txt.Targets[0] != "Case Matters." {
		t.Fatalf("TXT data must be kept as is: %+v", txt)
	}
}

// TestEncodedIsPublishedAsEncoded: a message built from an Encoded carries
// the bytes, hash and headers of one built from its event, tombstones'
// expiry included, and an Encoded is not encoded again.
func TestEncodedIsPublishedAsEncoded(t *testing.T) {
	ref := ObjectRef{Cluster: "c", Source: "service", Namespace: "ns", Name: "web"}
	for _, ev := range []Event{
		&SourceState{Object: ref, Endpoints: []Endpoint{{DNSName: "B.example.com.", RecordType: "a", Targets: []string{"10.0.0.2", "10.0.0.1"}}}},
		&SourceState{Object: ref},
		&CollectorState{CollectorRef: CollectorRef{Cluster: "c", Collector: "x"}, Phase: PhaseRetired},
	} {
		enc, err := Encode(ev)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := Encode(enc); err != nil || again != enc {
			t.Errorf("Encode of an Encoded: %p, %v; want %p", again, err, enc)
		}
		subject := ev.subject()
		direct, err := Message(subject, ev, "cause")
		if err != nil {
			t.Fatal(err)
		}
		fromEnc, err := Message(subject, enc, "cause")
		if err != nil {
			t.Fatal(err)
		}
		if string(direct.Data) != string(fromEnc.Data) || enc.Hash() != direct.Header.Get(HeaderHash) {
			t.Errorf("%s: payload or hash differ: %q/%q, hash %s/%s", ev.Schema(), direct.Data, fromEnc.Data, enc.Hash(), direct.Header.Get(HeaderHash))
		}
		for _, h := range []string{HeaderSchema, HeaderHash, HeaderCausation, "Nats-TTL"} {
			if direct.Header.Get(h) != fromEnc.Header.Get(h) {
				t.Errorf("%s: header %s: %q from the event, %q from its Encoded", ev.Schema(), h, direct.Header.Get(h), fromEnc.Header.Get(h))
			}
		}
	}
}
