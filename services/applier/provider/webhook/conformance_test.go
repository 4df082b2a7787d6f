package webhook_test

import (
	"testing"
	"time"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/services/applier/provider/webhook"
	"github.com/zonestream/zonestream/testenv/bind"
)

// TestConformance runs the suite through the whole protocol: the webhook
// client, zonestream's webhook server, the rfc2136 provider, a real BIND.
func TestConformance(t *testing.T) {
	providertest.Run(t, func(t *testing.T, tune func(*provider.RetryConfig)) (provider.Provider, providertest.Server) {
		b := bind.StartT(t, "example.org", "example.net")
		rp, err := rfc2136.New(rfc2136.Config{
			Host: b.Host, Port: b.Port, Zones: b.Zones,
			TSIGKeyName: b.KeyName, TSIGSecret: b.Secret, TSIGSecretAlg: b.Algorithm, TSIGAXFR: true,
			BatchChangeSize: 50, RetryConfig: provider.RetryConfig{Timeout: 2 * time.Second, Retries: 1, RetryBackoff: 10 * time.Millisecond},
		}, provider.Options{DefaultTTL: 300})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := serve(t, rp, webhook.ServerOptions{})
		retry := provider.RetryConfig{Retries: 3, RetryBackoff: 5 * time.Millisecond}
		if tune != nil {
			tune(&retry)
		}
		c, err := webhook.New(webhook.Config{
			URL: s.URL, ReadTimeout: 2 * time.Second, WriteTimeout: 5 * time.Second,
			Retries: retry.Retries, RetryBackoff: retry.RetryBackoff,
		}, provider.Options{DefaultTTL: 300})
		if err != nil {
			t.Fatal(err)
		}
		return c, providertest.BIND{Server: b}
	}, providertest.Options{ApexNS: true, UpdateKeepsTTL: true})
}
