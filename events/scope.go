package events

import (
	"slices"
	"strings"
)

// AllNamespaces in ProviderScope.Namespaces lets the objects of every
// namespace use a provider.
const AllNamespaces = "*"

// ProviderScope is what a declared provider (a DNSProvider or a
// ClusterDNSProvider object) may serve, published with its zone list by
// the applier that runs it. The planner plans, and the collector's status
// and the portal judge, every name by it (events/routing). A zone list
// without one is a provider declared by flags: it serves every name in
// its zones, for every namespace, as before DNSProviders existed.
type ProviderScope struct {
	// Declared is the object that declares the provider: "namespace/name"
	// for a DNSProvider, "/name" for a ClusterDNSProvider.
	Declared string `msgpack:"declared" json:"declared"`
	// Domains are the names it may serve (each with its subdomains);
	// empty: all of its zones. Exclude are names it must not serve.
	Domains []string `msgpack:"domains,omitempty" json:"domains,omitempty"`
	Exclude []string `msgpack:"exclude,omitempty" json:"exclude,omitempty"`
	// Namespaces are those whose objects may use it; AllNamespaces for
	// every one (cluster-scoped objects, Nodes, among them). Empty: none.
	Namespaces []string `msgpack:"namespaces,omitempty" json:"namespaces,omitempty"`
	// Quota is the most DNS names it may hold records at for us (0: no
	// limit). A name it holds already is never refused; a new one over the
	// quota is, with the object's status saying so.
	Quota int `msgpack:"quota,omitempty" json:"quota,omitempty"`
	// Retiring says the object is being deleted with its records: every
	// name the provider holds for us is planned to go (through the
	// mass-delete guard), and nothing new is planned into it.
	Retiring bool `msgpack:"retiring,omitempty" json:"retiring,omitempty"`
	// Problem is why the provider's zones could not be listed last time,
	// redacted ("" when they were): its zone list keeps the zones listed
	// before, so that its names wait for it instead of going elsewhere.
	Problem string `msgpack:"problem,omitempty" json:"problem,omitempty"`
}

// Allows reports whether an object of namespace may use the provider.
func (s *ProviderScope) Allows(namespace string) bool {
	return slices.Contains(s.Namespaces, AllNamespaces) || (namespace != "" && slices.Contains(s.Namespaces, namespace))
}

func (s *ProviderScope) canonicalize() {
	for i := range s.Domains {
		s.Domains[i] = NormalizeName(s.Domains[i])
	}
	for i := range s.Exclude {
		s.Exclude[i] = NormalizeName(s.Exclude[i])
	}
	s.Domains, s.Exclude, s.Namespaces = sortedSet(s.Domains), sortedSet(s.Exclude), sortedSet(s.Namespaces)
}

// DeclaredProvider is the bus name of the provider a DNSProvider object
// declares ("namespace/name"), or a ClusterDNSProvider (namespace "":
// "/name"). Kubernetes names hold no "/", so neither meets a flag-declared
// provider's name or another object's.
func DeclaredProvider(namespace, name string) string { return namespace + "/" + name }

// IsDeclared reports whether provider is the bus name of a provider an
// object declares (DeclaredProvider) rather than one declared by flags.
func IsDeclared(provider string) bool { return strings.Contains(provider, "/") }
