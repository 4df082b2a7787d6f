package externaldns

import (
	"context"

	"sigs.k8s.io/external-dns/endpoint"
	edprovider "sigs.k8s.io/external-dns/provider"
	"sigs.k8s.io/external-dns/provider/aws"
)

// domainFilter is the provider's GetDomainFilter, run under ctx where
// the provider's own runs under context.Background(): ExternalDNS' aws
// provider lists its hosted zones there, and the AWS SDK as ExternalDNS
// builds it (config.LoadDefaultConfig, no HTTP client of ours) has no
// response timeout, so a Route53 endpoint that never answers held that
// listing for ever. Its Zones(ctx) is the same listing, bounded by the
// request's context: the SDK builds every HTTP request with it. The
// filter is built as GetDomainFilter builds it; a failed listing falls
// back as GetDomainFilter's empty filter does, unless ctx has ended.
func (h *handler) domainFilter(ctx context.Context) (endpoint.DomainFilterInterface, error) {
	p := h.p
	if a, ok := p.(aliasNormalizing); ok {
		p = a.Provider
	}
	if c, ok := p.(*edprovider.CachedProvider); ok { // --provider-cache-time
		p = c.Provider
	}
	a, ok := p.(*aws.AWSProvider)
	if !ok {
		return h.p.GetDomainFilter(), nil
	}
	zones, err := a.Zones(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		h.log.Warn("externaldns: listing the hosted zones failed; negotiating --domain-filter", "err", err)
		return &endpoint.DomainFilter{}, nil
	}
	var names []string
	for _, z := range zones {
		names = append(names, *z.Name, "."+*z.Name)
	}
	return endpoint.NewDomainFilter(names), nil
}
