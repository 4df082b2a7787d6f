package f5

import (
	"strings"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
)

// ServerEndpoints computes the endpoints of one VirtualServer or
// TransportServer, as ExternalDNS' F5 sources do:
//
//   - nothing until BIG-IP has given it an address (status.vsAddress set
//     and not "None"), whatever the target annotation says;
//   - names: spec.host, and each non-empty spec.hostAliases entry
//     (VirtualServers only);
//   - targets: the target annotation, else spec.virtualServerAddress,
//     else status.vsAddress;
//   - only the annotation filter selects (not --label-filter), and the
//     set-identifier and provider-specific annotations are not read.
func (s *ServerSource) ServerEndpoints(srv *Server) ([]events.Endpoint, []error) {
	if !(source.Filters{Annotations: s.opts.Filters.Annotations}).Matches(nil, srv.Annotations) {
		return nil, nil
	}
	in := source.NewInputs(srv)
	if srv.invalid != nil {
		in.Problem(ReasonInvalidSpec, "spec", srv.invalid)
	}
	if addr := strings.TrimSpace(srv.Status.VSAddress); addr == "" || strings.EqualFold(addr, "none") {
		return nil, in.Problems
	}
	ttl := in.TTL()
	targets := in.Targets()
	if len(targets) == 0 {
		targets = address(in, "spec.virtualServerAddress", srv.Spec.VirtualServerAddress)
	}
	if len(targets) == 0 {
		targets = address(in, "status.vsAddress", srv.Status.VSAddress)
	}
	var set source.EndpointSet
	for _, n := range names(in, srv) {
		set.Add(n, targets...)
	}
	return set.Endpoints(ttl), in.Problems
}

// names are spec.host and the non-empty spec.hostAliases, the invalid
// ones reported.
func names(in *source.Inputs, srv *Server) []string {
	var out []string
	add := func(field, h string) {
		h = strings.TrimSuffix(strings.TrimSpace(h), ".")
		if h != "" {
			out = append(out, in.ValidHostnames([]string{h}, field, source.ReasonInvalidHostname)...)
		}
	}
	add("spec.host", srv.Spec.Host)
	for _, a := range srv.Spec.HostAliases {
		add("spec.hostAliases", a)
	}
	return out
}

// address is a spec or status address as a target, if it is one.
func address(in *source.Inputs, field, a string) []string {
	a = strings.TrimSpace(a)
	if a == "" {
		return nil
	}
	if err := source.ValidateTarget(a); err != nil {
		in.Problem(ReasonInvalidAddress, field, err)
		return nil
	}
	return []string{a}
}
