// Package externaldns drives ExternalDNS' own providers (Route53,
// Cloudflare, Google, Azure and every other provider of
// sigs.k8s.io/external-dns) behind the applier's provider.Provider.
//
// ExternalDNS' own Config parses ExternalDNS' command line and its own
// factory builds the provider; the provider is served in process over
// ExternalDNS' webhook protocol (handler.go) to the applier's webhook
// provider, which supplies what ExternalDNS providers lack: zones,
// preconditions, RRsets. See README.md.
package externaldns

import (
	"slices"
	"strings"

	edns "sigs.k8s.io/external-dns/pkg/apis/externaldns"

	"sigs.k8s.io/external-dns/endpoint"
)

// Parse reads an ExternalDNS command line with ExternalDNS' own Config:
// every provider flag keeps its name, default and $EXTERNAL_DNS_* variable.
// ExternalDNS requires --source; the applier reads no source, so a command
// line without one gets --source=service, which nothing here uses.
func Parse(args []string) (*edns.Config, error) {
	if !slices.ContainsFunc(args, func(a string) bool { return a == "--source" || strings.HasPrefix(a, "--source=") }) {
		args = append(slices.Clone(args), "--source=service")
	}
	cfg := edns.NewConfig()
	if err := cfg.ParseFlags(args); err != nil {
		return nil, configError(err)
	}
	return cfg, nil
}

// domainFilter is the filter ExternalDNS' controller builds from the
// command line and hands to the provider's constructor.
func domainFilter(cfg *edns.Config) *endpoint.DomainFilter {
	return endpoint.NewDomainFilterWithOptions(
		endpoint.WithDomainFilter(cfg.DomainFilter),
		endpoint.WithDomainExclude(cfg.DomainExclude),
		endpoint.WithRegexDomainFilter(cfg.RegexDomainFilter),
		endpoint.WithRegexDomainExclude(cfg.RegexDomainExclude),
	)
}

// Providers are the --provider values of ExternalDNS this adapter offers:
// every in-tree provider of the ExternalDNS version it is built with.
var Providers = edns.ProviderNames
