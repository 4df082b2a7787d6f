package rfc2136_test

import (
	"testing"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/testenv/bind"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, func(t *testing.T, tune func(*provider.RetryConfig)) (provider.Provider, providertest.Server) {
		s := bind.StartT(t, "example.org", "example.net")
		return newProvider(t, s, func(c *rfc2136.Config) {
			if tune != nil {
				tune(&c.RetryConfig)
			}
		}), providertest.BIND{Server: s}
	}, providertest.Options{ApexNS: true})
}
