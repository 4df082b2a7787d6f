package gateway

import (
	"fmt"
	"strings"

	"github.com/zonestream/zonestream/services/collector/source"
)

// AnnotationHostnameSource (on a route, without prefix) narrows where its
// names come from, as ExternalDNS' gateway-hostname-source:
// HostnameSourceAnnotationOnly takes the hostname annotation's names only,
// HostnameSourceDefinedHostsOnly spec.hostnames and the --fqdn-template
// names only (neither the annotation nor, for a route naming nothing, the
// listeners' hostnames). Absent or another value: every source of names.
const (
	AnnotationHostnameSource       = "gateway-hostname-source"
	HostnameSourceAnnotationOnly   = "annotation-only"
	HostnameSourceDefinedHostsOnly = "defined-hosts-only"
)

// hostnameSource is the route's gateway-hostname-source, lower-cased as
// ExternalDNS compares it; an unknown value is reported and read as none.
func hostnameSource(in *source.Inputs) string {
	v, k, ok := source.Annotation(in.Annotations, AnnotationHostnameSource)
	if !ok {
		return ""
	}
	switch v = strings.ToLower(strings.TrimSpace(v)); v {
	case HostnameSourceAnnotationOnly, HostnameSourceDefinedHostsOnly:
		return v
	}
	in.Problem(source.ReasonInvalidAnnotation, k, fmt.Errorf("%q is neither %s nor %s: every source of names is used",
		v, HostnameSourceAnnotationOnly, HostnameSourceDefinedHostsOnly))
	return ""
}
