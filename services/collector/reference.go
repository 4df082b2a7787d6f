package collector

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	contoursource "github.com/zonestream/zonestream/services/collector/source/contour"
	crdsource "github.com/zonestream/zonestream/services/collector/source/crd"
	gatewaysource "github.com/zonestream/zonestream/services/collector/source/gateway"
	ingresssource "github.com/zonestream/zonestream/services/collector/source/ingress"
	istiosource "github.com/zonestream/zonestream/services/collector/source/istio"
	kongsource "github.com/zonestream/zonestream/services/collector/source/kong"
	nodesource "github.com/zonestream/zonestream/services/collector/source/node"
	openshiftsource "github.com/zonestream/zonestream/services/collector/source/openshift"
	podsource "github.com/zonestream/zonestream/services/collector/source/pod"
	servicesource "github.com/zonestream/zonestream/services/collector/source/service"
	traefiksource "github.com/zonestream/zonestream/services/collector/source/traefik"
)

// reference names the object an item is about, for an Event recorded
// where a source reported no problem of its own (the object is too large
// for the bus).
func (r *run) reference(it item) *corev1.ObjectReference {
	apiVersion, kind, name := "v1", "", it.key.Name
	switch it.source {
	case servicesource.Name:
		kind = "Service"
	case nodesource.Name:
		kind = "Node"
	case podsource.Name:
		kind = "Pod"
	case ingresssource.Name:
		apiVersion, kind = "networking.k8s.io/v1", "Ingress"
	case crdsource.Name:
		apiVersion, kind = r.c.cfg.CRD.APIVersion, r.c.cfg.CRD.Kind
	case istiosource.GatewayName:
		apiVersion, kind = "networking.istio.io/v1", "Gateway"
	case istiosource.VirtualServiceName:
		apiVersion, kind = "networking.istio.io/v1", "VirtualService"
	case openshiftsource.Name:
		apiVersion, kind = openshiftsource.GroupVersion.String(), "Route"
	case contoursource.Name:
		apiVersion, kind = contoursource.GroupVersion.String(), "HTTPProxy"
	case kongsource.Name:
		apiVersion, kind = kongsource.GroupVersion.String(), "TCPIngress"
	case traefiksource.Name:
		// The key's name carries the kind: "<resource>.<group>/<name>".
		if v, k, ok := traefiksource.KindOfKey(it.key.Name); ok {
			apiVersion, kind = v, k
			name = it.key.Name[strings.IndexByte(it.key.Name, '/')+1:]
		}
	default:
		if ref, ok := r.sources[it.source].(referencer); ok {
			if v, k, n, ok := ref.Reference(it.key); ok {
				apiVersion, kind, name = v, k, n
			}
		}
		if v, k, ok := r.c.controllerKind(it.source); ok {
			apiVersion, kind = v, k
		}
		for _, k := range gatewaysource.Kinds {
			if k.Source == it.source {
				apiVersion, kind = "gateway.networking.k8s.io/v1", k.Kind
			}
		}
	}
	if kind == "" {
		kind = strings.ToUpper(it.source[:1]) + it.source[1:]
	}
	return &corev1.ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: it.key.Namespace, Name: name}
}
