package events

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// reflected is Endpoint without its codec methods: what msgpack's struct
// encoding makes of it.
type reflected Endpoint

// codecCases are endpoints with every field empty and set, alone and
// together.
var codecCases = []Endpoint{
	{},
	{DNSName: "www.example.org"},
	{DNSName: "www.example.org", RecordType: "A", Targets: []string{"192.0.2.1", "192.0.2.2"}, RecordTTL: 300},
	{DNSName: "txt.example.org", RecordType: "TXT", Targets: []string{`"heritage=external-dns,external-dns/owner=x"`}},
	{DNSName: "geo.example.org", RecordType: "CNAME", Targets: []string{"lb.example.org"}, SetIdentifier: "eu", RecordTTL: -1,
		Labels:           map[string]string{"resource": "service/default/web", "owner": "x", "a": ""},
		ProviderSpecific: []ProviderSpecificProperty{{Name: "aws/weight", Value: "10"}, {Name: "alias", Value: ""}}},
	{RecordType: "AAAA", Targets: []string{}, Labels: map[string]string{}},
	{DNSName: "ünïcode.example.org", RecordTTL: 1 << 40, Targets: []string{strings.Repeat("x", 300)}},
}

// encodeWith encodes v as Marshal does.
func encodeWith(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.SetOmitEmpty(true)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestEndpointCodecWritesWhatReflectionWrites(t *testing.T) {
	for _, ep := range codecCases {
		r := reflected(ep)
		if got, want := encodeWith(t, ep), encodeWith(t, &r); !bytes.Equal(got, want) {
			t.Errorf("%+v:\n got %x\nwant %x", ep, got, want)
		}
	}
	// Inside the events that carry them, as slices and pointers.
	type viaReflection struct {
		Records []reflected `msgpack:"records"`
		New     *reflected  `msgpack:"new,omitempty"`
	}
	type viaCodec struct {
		Records []Endpoint `msgpack:"records"`
		New     *Endpoint  `msgpack:"new,omitempty"`
	}
	var rs []reflected
	for _, ep := range codecCases {
		rs = append(rs, reflected(ep))
	}
	got := encodeWith(t, &viaCodec{Records: codecCases, New: &codecCases[2]})
	want := encodeWith(t, &viaReflection{Records: rs, New: &rs[2]})
	if !bytes.Equal(got, want) {
		t.Errorf("in a struct:\n got %x\nwant %x", got, want)
	}
}

func TestEndpointCodecReadsWhatReflectionReads(t *testing.T) {
	for _, ep := range codecCases {
		payload := encodeWith(t, ep)
		var got Endpoint
		var want reflected
		if err := msgpack.Unmarshal(payload, &got); err != nil {
			t.Fatalf("%+v: %v", ep, err)
		}
		if err := msgpack.Unmarshal(payload, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, Endpoint(want)) {
			t.Errorf("decoded %+v, reflection decodes %+v", got, want)
		}
	}
	// Fields it does not know (a newer writer's) are skipped, short and
	// long names alike; nil values leave their field empty.
	payload := encodeWith(t, map[string]any{"dnsName": "www.example.org", "weight": 5,
		strings.Repeat("k", 100): []string{"x"}, "targets": nil, "recordTTL": 60})
	var got Endpoint
	if err := msgpack.Unmarshal(payload, &got); err != nil {
		t.Fatal(err)
	}
	if want := (Endpoint{DNSName: "www.example.org", RecordTTL: 60}); !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
	// Garbage is an error, not an endpoint.
	for _, bad := range [][]byte{{0x81, 0xa7}, {0x81, 0xa7, 'd', 'n', 's', 'N', 'a', 'm', 'e', 0x05}, {0xc1}} {
		var ep Endpoint
		if err := msgpack.Unmarshal(bad, &ep); err == nil {
			t.Errorf("%x decoded as %+v", bad, ep)
		}
	}
}

// BenchmarkEndpointCodec encodes and decodes 1000 endpoints with the
// codec methods and with msgpack's reflection (reflected), side by side.
func BenchmarkEndpointCodec(b *testing.B) {
	eps := make([]Endpoint, 1000)
	rs := make([]reflected, len(eps))
	for i := range eps {
		eps[i] = NewEndpoint("svc-"+strings.Repeat("x", i%7)+".example.org", "A", 300, "10.0.0.1")
		rs[i] = reflected(eps[i])
	}
	payload, err := msgpack.Marshal(eps)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		do   func() error
	}{
		{"encode/codec", func() error { _, err := msgpack.Marshal(eps); return err }},
		{"encode/reflection", func() error { _, err := msgpack.Marshal(rs); return err }},
		{"decode/codec", func() error { var out []Endpoint; return msgpack.Unmarshal(payload, &out) }},
		{"decode/reflection", func() error { var out []reflected; return msgpack.Unmarshal(payload, &out) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.do(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
