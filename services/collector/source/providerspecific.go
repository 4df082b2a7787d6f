package source

import (
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// Provider-specific annotations become properties under the names
// ExternalDNS' providers read: aws-weight is aws/weight, scw-, coredns-
// and webhook- likewise; azure-tags is azure/tags; alias=true is alias;
// the Cloudflare ones keep their whole alpha-prefixed key, as ExternalDNS'
// Cloudflare provider looks them up that way.
var (
	// propertyPrefixes maps an annotation key prefix (after the
	// annotation prefix) to its property name prefix.
	propertyPrefixes = map[string]string{"aws-": "aws/", "scw-": "scw/", "coredns-": "coredns/", "webhook-": "webhook/"}
	// cloudflareKeys are the Cloudflare annotations ExternalDNS passes on.
	cloudflareKeys = []string{"cloudflare-proxied", "cloudflare-custom-hostname", "cloudflare-region-key",
		"cloudflare-record-comment", "cloudflare-tags"}
)

// ProviderSpecific are the object's provider-specific annotations as
// endpoint properties, sorted by name, read under AnnotationPrefixes; when
// two prefixes carry the same key, the first wins, as for every
// annotation. A property's name does not follow a custom prefix: it is
// what the provider reads.
func (in *Inputs) ProviderSpecific() []events.ProviderSpecificProperty {
	props := map[string]string{}
	prefixes := AnnotationPrefixes()
	for i := len(prefixes) - 1; i >= 0; i-- { // the first last: it wins
		prefix := prefixes[i]
		for k, v := range in.Annotations {
			key, ok := strings.CutPrefix(k, prefix)
			if !ok {
				continue
			}
			if key == "alias" && v != "true" {
				continue // only alias=true asks for an alias record
			}
			if name, ok := propertyName(key); ok {
				props[name] = v
			}
		}
	}
	out := make([]events.ProviderSpecificProperty, 0, len(props))
	for name, v := range props {
		out = append(out, events.ProviderSpecificProperty{Name: name, Value: v})
	}
	slices.SortFunc(out, func(a, b events.ProviderSpecificProperty) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// propertyName is the property a provider-specific annotation key
// (without prefix) becomes, if it is one.
func propertyName(key string) (string, bool) {
	switch {
	case key == "alias":
		return "alias", true
	case key == "azure-tags":
		return "azure/tags", true
	case key == AnnotationRecordType:
		return PropertyRecordType, true // taken off by the collector (PTR)
	case slices.Contains(cloudflareKeys, key):
		return AnnotationPrefixAlpha + key, true
	}
	for prefix, name := range propertyPrefixes {
		if attr, ok := strings.CutPrefix(key, prefix); ok && attr != "" {
			return name + attr, true
		}
	}
	return "", false
}

// Routed sets on every endpoint the object's set identifier and its
// provider-specific properties: the routing policy (weights, failover,
// geolocation) and the provider's options that ride with each record.
func (in *Inputs) Routed(eps []events.Endpoint) []events.Endpoint {
	id, props := in.SetIdentifier(), in.ProviderSpecific()
	for i := range eps {
		if id != "" {
			eps[i].SetIdentifier = id
		}
		if len(props) > 0 {
			eps[i].ProviderSpecific = append(slices.Clone(props), eps[i].ProviderSpecific...)
		}
	}
	return eps
}
