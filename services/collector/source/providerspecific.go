package source

import (
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// Provider-specific annotations become properties under the names
// ExternalDNS' providers read (v0.23): aws-weight is aws/weight, scw-,
// coredns- and webhook- likewise; azure-tags is azure/tags; alias=true is
// alias; the five Cloudflare ones are cloudflare/<attribute>
// (cloudflare-proxied is cloudflare/proxied), whatever the prefix.
var (
	// propertyPrefixes maps an annotation key prefix (after the
	// annotation prefix) to its property name prefix.
	propertyPrefixes = map[string]string{"aws-": "aws/", "scw-": "scw/", "coredns-": "coredns/", "webhook-": "webhook/"}
	// cloudflareAttributes are the Cloudflare annotations' attributes
	// (cloudflare-<attribute>) ExternalDNS passes on.
	cloudflareAttributes = []string{"proxied", "custom-hostname", "region-key", "record-comment", "tags"}
)

// cloudflareProperty is the property the Cloudflare annotation key
// cloudflare-<attribute> becomes.
func cloudflareProperty(key string) (string, bool) {
	attr, ok := strings.CutPrefix(key, "cloudflare-")
	if !ok || !slices.Contains(cloudflareAttributes, attr) {
		return "", false
	}
	return "cloudflare/" + attr, true
}

// CanonicalProperties rewrites the Cloudflare property names ExternalDNS
// read before v0.23 (the annotation's whole key under any prefix,
// "external-dns.alpha.kubernetes.io/cloudflare-proxied", or the bare
// "cloudflare-proxied") to v0.23's ("cloudflare/proxied"), as ExternalDNS
// v0.23 rewrites a DNSEndpoint's; a canonical one given too wins.
func CanonicalProperties(props []events.ProviderSpecificProperty) []events.ProviderSpecificProperty {
	legacyName := func(name string) (string, bool) {
		return cloudflareProperty(name[strings.LastIndex(name, "/")+1:])
	}
	var out []events.ProviderSpecificProperty
	for _, p := range props {
		canonical, legacy := legacyName(p.Name)
		if !legacy {
			out = append(out, p)
			continue
		}
		if slices.ContainsFunc(props, func(q events.ProviderSpecificProperty) bool { return q.Name == canonical }) {
			continue
		}
		p.Name = canonical
		out = append(out, p)
	}
	return out
}

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
	}
	if name, ok := cloudflareProperty(key); ok {
		return name, true
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
