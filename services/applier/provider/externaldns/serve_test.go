package externaldns_test

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/externaldns"
	"github.com/zonestream/zonestream/services/applier/provider/webhook"
)

// zonestream-externaldns serves ExternalDNS' aws provider over the webhook
// protocol on loopback; the applier's webhook provider drives it into
// Route53 (moto).
func TestServeDrivesRoute53OverTheWebhookProtocol(t *testing.T) {
	r := startRoute53(t, "example.org")
	cfg, err := externaldns.Parse([]string{"--provider=aws", "--aws-zone-type=public"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- externaldns.Serve(ctx, cfg, l, slog.Default()) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	wp, err := webhook.New(webhook.Config{URL: "http://" + l.Addr().String()}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := provider.Checked(wp)
	if zones, err := p.Zones(ctx); err != nil || !slices.Equal(zones, []string{"example.org"}) {
		t.Fatalf("zones %v %v", zones, err)
	}
	if err := p.Apply(ctx, "example.org", []events.Change{
		{New: ep("web.example.org", "A", 60, "192.0.2.1")},
		{New: ep("a-web.example.org", "TXT", 0, "heritage=external-dns,external-dns/owner=default")},
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{`a-web.example.org TXT "heritage=external-dns,external-dns/owner=default"`, "web.example.org A 192.0.2.1"}
	if got := r.rrsets(t); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
