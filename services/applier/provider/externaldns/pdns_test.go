package externaldns_test

import (
	"testing"
	"time"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/externaldns"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
	pdnsenv "github.com/zonestream/zonestream/testenv/pdns"
)

// pdnsArgs is the command line an ExternalDNS user gives its pdns provider
// for s (the API key as a flag here; users give it from a Secret through
// $EXTERNAL_DNS_PDNS_API_KEY).
func pdnsArgs(s *pdnsenv.Server) []string {
	args := []string{"--provider=pdns", "--pdns-server=" + s.APIURL, "--pdns-api-key=" + s.APIKey}
	for _, z := range s.Zones {
		args = append(args, "--domain-filter="+z)
	}
	return args
}

// ExternalDNS' own pdns provider, through the adapter, passes the
// conformance suite against the real PowerDNS the native pdns provider is
// tested on.
func TestConformancePDNS(t *testing.T) {
	providertest.Run(t, func(t *testing.T, tune func(*provider.RetryConfig)) (provider.Provider, providertest.Server) {
		s := pdnsenv.StartT(t, "example.org", "example.net")
		r := provider.RetryConfig{RetryBackoff: 10 * time.Millisecond}
		if tune != nil {
			tune(&r)
		}
		return newAdapter(t, pdnsArgs(s), externaldns.WithRetry(r)), providertest.PowerDNS{Server: s}
	}, providertest.Options{ApexNS: true, UpdateKeepsTTL: true,
		// ExternalDNS' pdns client waits about 2s between its own
		// attempts at a server that is down, under the adapter's retries.
		OutageLimit: 20 * time.Second})
}
