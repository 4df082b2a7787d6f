package traefik

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/zonestream/zonestream/services/collector/source"
)

// The API groups: Traefik v3's, and v2's legacy one.
const (
	groupNew    = "traefik.io"
	groupLegacy = "traefik.containo.us"
	version     = "v1alpha1"
)

// Kind is one resource the source reads.
type Kind struct {
	GroupVersion schema.GroupVersion
	Kind         string
	Resource     string
	// hostRules: the spec's routes' match rules name hosts (not UDP).
	hostRules bool
}

// kindsOf are the kinds of one API group.
func kindsOf(group string) []Kind {
	gv := schema.GroupVersion{Group: group, Version: version}
	return []Kind{
		{GroupVersion: gv, Kind: "IngressRoute", Resource: "ingressroutes", hostRules: true},
		{GroupVersion: gv, Kind: "IngressRouteTCP", Resource: "ingressroutetcps", hostRules: true},
		{GroupVersion: gv, Kind: "IngressRouteUDP", Resource: "ingressrouteudps"},
	}
}

// Kinds are the kinds the flags select: traefik.io unless
// --traefik-disable-new, traefik.containo.us with --traefik-enable-legacy.
func Kinds(f Flags) []Kind {
	var out []Kind
	if !f.DisableNew {
		out = append(out, kindsOf(groupNew)...)
	}
	if f.EnableLegacy {
		out = append(out, kindsOf(groupLegacy)...)
	}
	return out
}

// One source reads several kinds whose objects may share a name, so a
// key's name carries the kind as kubectl spells it:
// "<resource>.<group>/<name>", e.g. "ingressroutes.traefik.io/web"
// (a Kubernetes name never holds a '/').

// qualifier is the kind's part of a key name, with its '/'.
func (k Kind) qualifier() string { return k.Resource + "." + k.GroupVersion.Group + "/" }

// Key is the source's key of the object ns/name of kind k.
func (k Kind) Key(ns, name string) source.Key {
	return source.Key{Namespace: ns, Name: k.qualifier() + name}
}

// ParseKey returns the kind of key among kinds and the object's own key;
// ok is false for a key of no kind in kinds (one the flags no longer
// select).
func ParseKey(key source.Key, kinds []Kind) (Kind, source.Key, bool) {
	for _, k := range kinds {
		if name, ok := strings.CutPrefix(key.Name, k.qualifier()); ok && name != "" && !strings.Contains(name, "/") {
			return k, source.Key{Namespace: key.Namespace, Name: name}, true
		}
	}
	return Kind{}, source.Key{}, false
}

// KindOfKey returns the API version and kind of an object from its key
// name, for references to it; ok is false when the name is not one of
// the source's.
func KindOfKey(name string) (apiVersion, kind string, ok bool) {
	k, _, ok := ParseKey(source.Key{Name: name}, append(kindsOf(groupNew), kindsOf(groupLegacy)...))
	return k.GroupVersion.String(), k.Kind, ok
}
