package externaldns_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/externaldns"
)

// The flags an ExternalDNS user passes keep ExternalDNS' names, defaults
// and meaning: ExternalDNS' own Config parses them.
func TestParseTakesExternalDNSFlags(t *testing.T) {
	cfg, err := externaldns.Parse([]string{"--provider=aws", "--aws-zone-type=public", "--aws-batch-change-size=7",
		"--aws-zones-cache-duration=90s", "--domain-filter=example.org"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Provider != "aws" || cfg.AWSZoneType != "public" || cfg.AWSBatchChangeSize != 7 ||
		cfg.AWSZoneCacheDuration != 90*time.Second || len(cfg.DomainFilter) != 1 {
		t.Fatalf("parsed %+v", cfg)
	}
	// A default ExternalDNS sets: 1000 changes per Route53 batch.
	if cfg, err := externaldns.Parse([]string{"--provider=aws"}); err != nil || cfg.AWSBatchChangeSize != 1000 {
		t.Fatalf("default batch size: %v %v", cfg.AWSBatchChangeSize, err)
	}
	// Route53's pause between change batches: 200ms unless given (see
	// awsBatchChangeInterval), as given when it is.
	if cfg, err := externaldns.Parse([]string{"--provider=aws"}); err != nil || cfg.AWSBatchChangeInterval != 200*time.Millisecond {
		t.Fatalf("default batch interval: %v %v", cfg.AWSBatchChangeInterval, err)
	}
	if cfg, err := externaldns.Parse([]string{"--provider=aws", "--aws-batch-change-interval=1s"}); err != nil || cfg.AWSBatchChangeInterval != time.Second {
		t.Fatalf("given batch interval: %v %v", cfg.AWSBatchChangeInterval, err)
	}
	t.Setenv("EXTERNAL_DNS_CLOUDFLARE_PROXIED", "true")
	if cfg, err := externaldns.Parse([]string{"--provider=cloudflare"}); err != nil || !cfg.CloudflareProxied {
		t.Fatalf("$EXTERNAL_DNS_CLOUDFLARE_PROXIED: %v", err)
	}
}

// Every in-tree provider of ExternalDNS v0.21.0 is offered, by the name
// ExternalDNS users give it.
func TestEveryProviderIsOffered(t *testing.T) {
	for _, name := range []string{"aws", "aws-sd", "azure", "azure-dns", "azure-private-dns", "google", "cloudflare",
		"alibabacloud", "dnsimple", "godaddy", "linode", "ns1", "oci", "ovh",
		"pihole", "scaleway", "rfc2136", "pdns", "coredns", "skydns", "inmemory", "webhook"} {
		if !slices.Contains(externaldns.Providers, name) {
			t.Errorf("%s is not offered", name)
		}
		if cfg, err := externaldns.Parse([]string{"--provider=" + name}); err != nil || cfg.Provider != name {
			t.Errorf("--provider=%s: %v", name, err)
		}
	}
}

// A provider ExternalDNS removed since v0.21, or one this build cannot
// link, is refused with why and what to run instead.
func TestRemovedAndUnlinkedProvidersSayWhy(t *testing.T) {
	for name, want := range map[string]string{
		"akamai": "removed its in-tree akamai provider in v0.22", "gandi": "removed its in-tree gandi provider in v0.23",
		"civo": "github.com/civo/civogo v0.7.3", "exoscale": "github.com/exoscale/egoscale/v3 v3.1.50",
	} {
		_, err := externaldns.New(context.Background(), []string{"--provider=" + name}, provider.Options{})
		if !errors.Is(err, externaldns.ErrConfig) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "webhook") {
			t.Errorf("--provider=%s: %v, want a configuration error saying %q and naming the webhook", name, err, want)
		}
		if slices.Contains(externaldns.Providers, name) {
			t.Errorf("%s is offered", name)
		}
	}
}

// A bad command line or a provider that cannot be built is a clear
// configuration error, before anything runs.
func TestConfigurationErrors(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{
		{"--provider=no-such-dns"},
		{"--provider=aws", "--aws-zone-type=sideways"},
		{"--provider=aws", "--no-such-flag"},
		{"--provider=rfc2136", "--rfc2136-port=notaport"},
	} {
		if _, err := externaldns.New(ctx, args, provider.Options{}); !errors.Is(err, externaldns.ErrConfig) {
			t.Errorf("%v: %v, want ErrConfig", args, err)
		}
	}
	// Cloudflare without a token: ExternalDNS' constructor refuses it.
	t.Setenv("CF_API_TOKEN", "")
	t.Setenv("CF_API_KEY", "")
	t.Setenv("CF_API_EMAIL", "")
	if _, err := externaldns.New(ctx, []string{"--provider=cloudflare"}, provider.Options{}); !errors.Is(err, externaldns.ErrConfig) {
		t.Errorf("cloudflare without credentials: %v, want ErrConfig", err)
	}
}
