// Package externaldns drives ExternalDNS' own providers (Route53,
// Cloudflare, Google, Azure and every other provider of
// sigs.k8s.io/external-dns) behind the applier's provider.Provider.
//
// ExternalDNS' own Config parses ExternalDNS' command line and its
// provider table (providers.go) builds the provider; the provider is served in process over
// ExternalDNS' webhook protocol (handler.go) to the applier's webhook
// provider, which supplies what ExternalDNS providers lack: zones,
// preconditions, RRsets. See README.md.
package externaldns

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	edns "sigs.k8s.io/external-dns/pkg/apis/externaldns"

	"sigs.k8s.io/external-dns/endpoint"
)

// Parse reads an ExternalDNS command line with ExternalDNS' own Config:
// every provider flag keeps its name, default and $EXTERNAL_DNS_* variable.
// ExternalDNS requires --source; the applier reads no source, so a command
// line without one gets --source=service, which nothing here uses.
func Parse(args []string) (*edns.Config, error) {
	if why, ok := removed[providerOf(args)]; ok {
		return nil, configError(fmt.Errorf("--provider=%s: %s", providerOf(args), why))
	}
	if !given(args, "source") {
		args = append(slices.Clone(args), "--source=service")
	}
	cfg := edns.NewConfig()
	if err := cfg.ParseFlags(args); err != nil {
		return nil, configError(err)
	}
	rememberSecrets(cfg)
	if !given(args, "aws-batch-change-interval") {
		cfg.AWSBatchChangeInterval = awsBatchChangeInterval
	}
	return cfg, nil
}

// awsBatchChangeInterval is zonestream's default pause between two
// Route53 change batches: Route53's 5 requests per second. ExternalDNS'
// 1s is paid after every apply, not only between batches: v0.21.0's aws
// provider queues an empty batch of retries after the new changes and
// pauses before it, so one change takes a second longer than it must. An
// interval given on the command line or in the environment is kept.
const awsBatchChangeInterval = 200 * time.Millisecond

// given says whether the flag is on the command line or in its
// $EXTERNAL_DNS_* variable.
func given(args []string, flag string) bool {
	if _, ok := os.LookupEnv("EXTERNAL_DNS_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))); ok {
		return true
	}
	return slices.ContainsFunc(args, func(a string) bool { return a == "--"+flag || strings.HasPrefix(a, "--"+flag+"=") })
}

// providerOf is the --provider value of args, or of $EXTERNAL_DNS_PROVIDER.
func providerOf(args []string) string {
	p := os.Getenv("EXTERNAL_DNS_PROVIDER")
	for i, a := range args {
		switch {
		case a == "--provider" && i+1 < len(args):
			p = args[i+1]
		case strings.HasPrefix(a, "--provider="):
			p = strings.TrimPrefix(a, "--provider=")
		}
	}
	return p
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
// every in-tree provider of the ExternalDNS version it is built with, but
// those it cannot link (unlinked).
var Providers = slices.DeleteFunc(slices.Clone(edns.ProviderNames), func(p string) bool { _, ok := unlinked[p]; return ok })
