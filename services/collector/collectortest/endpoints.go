package collectortest

import (
	"strings"

	"github.com/zonestream/zonestream/events"
)

// The two annotation prefixes of ExternalDNS.
const (
	Alpha  = "external-dns.alpha.kubernetes.io/"
	Stable = "external-dns.kubernetes.io/"
)

// Ann builds annotations from key, value pairs; keys without a '/' get the
// alpha prefix.
func Ann(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		k := kv[i]
		if !strings.Contains(k, "/") {
			k = Alpha + k
		}
		m[k] = kv[i+1]
	}
	return m
}

// EP is an endpoint without ttl.
func EP(name, typ string, targets ...string) events.Endpoint {
	return events.NewEndpoint(name, typ, 0, targets...)
}

// WithSetID is e with set identifier id.
func WithSetID(e events.Endpoint, id string) events.Endpoint {
	e.SetIdentifier = id
	return e
}

// Fixed is a want that ignores its argument.
func Fixed(eps ...events.Endpoint) func(string) []events.Endpoint {
	return func(string) []events.Endpoint { return eps }
}
