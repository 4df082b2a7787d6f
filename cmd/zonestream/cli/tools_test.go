package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

func TestDecode(t *testing.T) {
	payload, err := events.Marshal(&events.DesiredState{DNSName: "www.example.org",
		Endpoints: []events.Endpoint{events.NewEndpoint("www.example.org", "A", 0, "192.0.2.1")}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := decode(nil, bytes.NewReader(payload), &out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		DNSName   string `json:"dnsName"`
		Endpoints []struct {
			Targets []string `json:"targets"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("decode printed %q: %v", out.String(), err)
	}
	if got.DNSName != "www.example.org" || got.Endpoints[0].Targets[0] != "192.0.2.1" {
		t.Fatalf("decode printed %s", out.String())
	}
	if err := decode(nil, strings.NewReader("\xc1garbage"), &out); err == nil {
		t.Fatal("garbage decoded without an error")
	}
}

func TestTail(t *testing.T) {
	s := natsenv.StartT(t)
	_, js := natsenv.Connect(t, s.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := events.EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.example.org", "b.example.org", "c.example.net"} {
		d := &events.DesiredState{DNSName: name, Endpoints: []events.Endpoint{events.NewEndpoint(name, "A", 0, "192.0.2.1")}}
		if _, _, err := events.Publish(ctx, js, events.DesiredSubject(name), d, "cause-"+name); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := tailSubject(ctx, js, "zs.desired.org.example.>", jetstream.DeliverAllPolicy, false, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("tail of example.org printed %d lines, want 2:\n%s", len(lines), out.String())
	}
	var first tailLine
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if first.Subject != "zs.desired.org.example.a" || first.Headers[events.HeaderCausation] != "cause-a.example.org" ||
		!strings.Contains(string(first.Event), `"dnsName":"a.example.org"`) {
		t.Fatalf("unexpected line %s", lines[0])
	}
}
