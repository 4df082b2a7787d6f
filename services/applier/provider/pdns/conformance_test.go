package pdns_test

import (
	"testing"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	pdnsenv "github.com/zonestream/zonestream/testenv/pdns"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, func(t *testing.T, tune func(*provider.RetryConfig)) (provider.Provider, providertest.Server) {
		s := pdnsenv.StartT(t, "example.org", "example.net")
		t.Logf("PowerDNS %s", s.Version)
		return newProvider(t, s, func(c *pdns.Config) {
			if tune != nil {
				tune(&c.RetryConfig)
			}
		}), providertest.PowerDNS{Server: s}
	}, providertest.Options{ApexNS: true, ZonesFromServer: true})
}
