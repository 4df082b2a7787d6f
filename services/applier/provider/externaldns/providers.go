package externaldns

import (
	"context"
	"fmt"

	"sigs.k8s.io/external-dns/endpoint"
	edns "sigs.k8s.io/external-dns/pkg/apis/externaldns"
	edprovider "sigs.k8s.io/external-dns/provider"
	"sigs.k8s.io/external-dns/provider/alibabacloud"
	"sigs.k8s.io/external-dns/provider/aws"
	"sigs.k8s.io/external-dns/provider/awssd"
	"sigs.k8s.io/external-dns/provider/azure"
	"sigs.k8s.io/external-dns/provider/cloudflare"
	"sigs.k8s.io/external-dns/provider/coredns"
	"sigs.k8s.io/external-dns/provider/dnsimple"
	"sigs.k8s.io/external-dns/provider/godaddy"
	"sigs.k8s.io/external-dns/provider/google"
	"sigs.k8s.io/external-dns/provider/inmemory"
	"sigs.k8s.io/external-dns/provider/linode"
	"sigs.k8s.io/external-dns/provider/ns1"
	"sigs.k8s.io/external-dns/provider/oci"
	"sigs.k8s.io/external-dns/provider/ovh"
	"sigs.k8s.io/external-dns/provider/pdns"
	"sigs.k8s.io/external-dns/provider/pihole"
	"sigs.k8s.io/external-dns/provider/rfc2136"
	"sigs.k8s.io/external-dns/provider/scaleway"
	"sigs.k8s.io/external-dns/provider/webhook"
)

// constructor is the signature every ExternalDNS provider package's New has.
type constructor func(ctx context.Context, cfg *edns.Config, df *endpoint.DomainFilter) (edprovider.Provider, error)

// constructors is ExternalDNS' provider table (its provider/factory),
// written out here because the factory cannot be linked: it imports every
// provider package, and civo's and exoscale's need module versions the Go
// module proxy does not serve (github.com/civo/civogo v0.7.3,
// github.com/exoscale/egoscale/v3 v3.1.50). Those two are in unlinked,
// with the reason.
var constructors = map[string]constructor{
	edns.ProviderAlibabaCloud: alibabacloud.New,
	edns.ProviderAWS:          aws.New,
	edns.ProviderAWSSD:        awssd.New,
	edns.ProviderAzure:        azure.New,
	edns.ProviderAzureDNS:     azure.New,
	edns.ProviderAzurePrivate: azure.NewPrivate,
	edns.ProviderCloudflare:   cloudflare.New,
	edns.ProviderCoreDNS:      coredns.New,
	edns.ProviderSkyDNS:       coredns.New,
	edns.ProviderDNSimple:     dnsimple.New,
	edns.ProviderGoDaddy:      godaddy.New,
	edns.ProviderGoogle:       google.New,
	edns.ProviderInMemory:     inmemory.New,
	edns.ProviderLinode:       linode.New,
	edns.ProviderNS1:          ns1.New,
	edns.ProviderOCI:          oci.New,
	edns.ProviderOVH:          ovh.New,
	edns.ProviderPDNS:         pdns.New,
	edns.ProviderPihole:       pihole.New,
	edns.ProviderRFC2136:      rfc2136.New,
	edns.ProviderScaleway:     scaleway.New,
	edns.ProviderWebhook:      webhook.New,
}

// unlinked are ExternalDNS providers this build cannot offer, and why.
var unlinked = map[string]string{
	edns.ProviderCivo: "ExternalDNS v0.23's civo provider needs github.com/civo/civogo v0.7.3, which the Go module proxy does not serve; " +
		"run ExternalDNS' civo webhook, or zonestream --provider=webhook",
	edns.ProviderExoscale: "ExternalDNS v0.23's exoscale provider needs github.com/exoscale/egoscale/v3 v3.1.50, which the Go module proxy does not serve; " +
		"run Exoscale's external-dns webhook with zonestream --provider=webhook",
}

// removed are the providers ExternalDNS v0.21 had in tree and has since
// removed (ExternalDNS v0.23 is linked): each has an ExternalDNS webhook of
// its own, which zonestream --provider=webhook drives.
var removed = map[string]string{
	"akamai":  "ExternalDNS removed its in-tree akamai provider in v0.22: run Akamai's external-dns webhook and zonestream --provider=webhook",
	"plural":  "ExternalDNS removed its in-tree plural provider in v0.22: run a plural webhook and zonestream --provider=webhook",
	"transip": "ExternalDNS removed its in-tree transip provider in v0.22: run TransIP's external-dns webhook and zonestream --provider=webhook",
	"gandi":   "ExternalDNS removed its in-tree gandi provider in v0.23: run Gandi's external-dns webhook and zonestream --provider=webhook",
}

// selectProvider is ExternalDNS' factory.Select: the provider cfg names,
// behind ExternalDNS' cache when --provider-cache-time asks for one, with
// its alias records normalized as the factory does.
func selectProvider(ctx context.Context, cfg *edns.Config, df *endpoint.DomainFilter) (edprovider.Provider, error) {
	if why, ok := unlinked[cfg.Provider]; ok {
		return nil, fmt.Errorf("provider %q is not in this build: %s", cfg.Provider, why)
	}
	newProvider, ok := constructors[cfg.Provider]
	if !ok {
		return nil, fmt.Errorf("unknown dns provider: %s", cfg.Provider)
	}
	p, err := newProvider(ctx, cfg, df)
	if err != nil {
		return nil, err
	}
	if cfg.ProviderCacheTime > 0 {
		p = edprovider.NewCachedProvider(p, cfg.ProviderCacheTime)
	}
	return aliasNormalizing{p}, nil
}

// aliasNormalizing is the factory's alias middleware: an A (AAAA) asking
// for alias=A (alias=AAAA) asks for an alias.
type aliasNormalizing struct{ edprovider.Provider }

func (p aliasNormalizing) AdjustEndpoints(eps []*endpoint.Endpoint) ([]*endpoint.Endpoint, error) {
	eps, err := p.Provider.AdjustEndpoints(eps)
	if err != nil {
		return nil, err
	}
	for _, ep := range eps {
		alias := ep.GetAliasProperty()
		if (ep.RecordType == endpoint.RecordTypeA && alias == endpoint.AliasA) ||
			(ep.RecordType == endpoint.RecordTypeAAAA && alias == endpoint.AliasAAAA) {
			ep.SetProviderSpecificProperty(endpoint.ProviderSpecificAlias, string(endpoint.AliasTrue))
		}
	}
	return eps, nil
}

// Refused says whether --provider=name is refused at start with why (a
// provider this build cannot link, or one ExternalDNS removed).
func Refused(name string) bool {
	_, unlinkedOK := unlinked[name]
	_, removedOK := removed[name]
	return unlinkedOK || removedOK
}
