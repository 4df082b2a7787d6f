package collector

import (
	"testing"

	"github.com/zonestream/zonestream/services/collector/source"
)

// The Event about an object a source reported nothing on names the
// object's real kind, also for the sources of other projects' resources;
// a traefik-proxy key's name carries the kind, which the reference
// splits off.
func TestReferenceNamesTheObject(t *testing.T) {
	r := &run{c: &Collector{}}
	for _, tc := range []struct {
		source, name             string
		apiVersion, kind, object string
	}{
		{"openshift-route", "web", "route.openshift.io/v1", "Route", "web"},
		{"contour-httpproxy", "web", "projectcontour.io/v1", "HTTPProxy", "web"},
		{"kong-tcpingress", "db", "configuration.konghq.com/v1beta1", "TCPIngress", "db"},
		{"traefik-proxy", "ingressroutes.traefik.io/web", "traefik.io/v1alpha1", "IngressRoute", "web"},
		{"traefik-proxy", "ingressroutetcps.traefik.containo.us/db", "traefik.containo.us/v1alpha1", "IngressRouteTCP", "db"},
		{"traefik-proxy", "ingressrouteudps.traefik.io/dns", "traefik.io/v1alpha1", "IngressRouteUDP", "dns"},
	} {
		ref := r.reference(item{source: tc.source, key: source.Key{Namespace: "ns", Name: tc.name}})
		if ref.APIVersion != tc.apiVersion || ref.Kind != tc.kind || ref.Namespace != "ns" || ref.Name != tc.object {
			t.Errorf("%s %s: reference %s %s %s/%s, want %s %s ns/%s", tc.source, tc.name,
				ref.APIVersion, ref.Kind, ref.Namespace, ref.Name, tc.apiVersion, tc.kind, tc.object)
		}
	}
}
