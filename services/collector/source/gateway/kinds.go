package gateway

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Group is the API group of Gateways and routes.
const Group = "gateway.networking.k8s.io"

// GroupVersion is the version read first: the one the standard channel
// serves every kind in.

var GroupVersion = schema.GroupVersion{Group: Group, Version: "v1"}

// Kind describes one route kind: its --source name, its Kubernetes kind,
// the listener protocols it attaches to, and the older versions read
// when a cluster's CRD does not serve v1 yet (their fields are those of
// v1 for everything this source reads).
type Kind struct {
	Source           string
	Kind             string
	Protocols        []gwv1.ProtocolType
	FallbackVersions []string
	newObject        func() route
}

// gatewayFallbackVersions are read when Gateways are not served as v1.
var gatewayFallbackVersions = []string{"v1beta1"}

// The five route kinds, ExternalDNS' gateway-* sources.
var (
	HTTPRoute = Kind{Source: "gateway-httproute", Kind: "HTTPRoute",
		Protocols: []gwv1.ProtocolType{gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType}, FallbackVersions: []string{"v1beta1"},
		newObject: func() route { return &gwv1.HTTPRoute{} }}
	GRPCRoute = Kind{Source: "gateway-grpcroute", Kind: "GRPCRoute",
		Protocols: []gwv1.ProtocolType{gwv1.HTTPProtocolType, gwv1.HTTPSProtocolType}, FallbackVersions: []string{"v1alpha2"},
		newObject: func() route { return &gwv1.GRPCRoute{} }}
	TLSRoute = Kind{Source: "gateway-tlsroute", Kind: "TLSRoute",
		Protocols: []gwv1.ProtocolType{gwv1.TLSProtocolType}, FallbackVersions: []string{"v1alpha3", "v1alpha2"},
		newObject: func() route { return &gwv1.TLSRoute{} }}
	TCPRoute = Kind{Source: "gateway-tcproute", Kind: "TCPRoute",
		Protocols: []gwv1.ProtocolType{gwv1.TCPProtocolType}, FallbackVersions: []string{"v1alpha2"},
		newObject: func() route { return &gwv1.TCPRoute{} }}
	UDPRoute = Kind{Source: "gateway-udproute", Kind: "UDPRoute",
		Protocols: []gwv1.ProtocolType{gwv1.UDPProtocolType}, FallbackVersions: []string{"v1alpha2"},
		newObject: func() route { return &gwv1.UDPRoute{} }}
)

// Kinds are all route kinds, for registration.
var Kinds = []Kind{HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute}

// route is a typed route object of any kind.
type route interface {
	runtime.Object
	metav1.Object
}

// parentRefs are the route's spec.parentRefs: what it asks to attach to.
func parentRefs(r route) []gwv1.ParentReference {
	switch r := r.(type) {
	case *gwv1.HTTPRoute:
		return r.Spec.ParentRefs
	case *gwv1.GRPCRoute:
		return r.Spec.ParentRefs
	case *gwv1.TLSRoute:
		return r.Spec.ParentRefs
	case *gwv1.TCPRoute:
		return r.Spec.ParentRefs
	case *gwv1.UDPRoute:
		return r.Spec.ParentRefs
	}
	return nil
}

// routeParts returns what the source reads of a route: spec.hostnames
// (none for TCP and UDP routes) and its status.
func routeParts(r route) ([]gwv1.Hostname, *gwv1.RouteStatus) {
	switch r := r.(type) {
	case *gwv1.HTTPRoute:
		return r.Spec.Hostnames, &r.Status.RouteStatus
	case *gwv1.GRPCRoute:
		return r.Spec.Hostnames, &r.Status.RouteStatus
	case *gwv1.TLSRoute:
		return r.Spec.Hostnames, &r.Status.RouteStatus
	case *gwv1.TCPRoute:
		return nil, &r.Status.RouteStatus
	case *gwv1.UDPRoute:
		return nil, &r.Status.RouteStatus
	}
	return nil, &gwv1.RouteStatus{}
}
