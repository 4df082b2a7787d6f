package unstructured

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/zonestream/zonestream/services/collector/source"
)

// ParseResources parses --unstructured-resource values: ExternalDNS'
// "resource.version.group", or "resource.version" for the core group
// (configmaps.v1). Repeated values count once.
func ParseResources(values []string) ([]schema.GroupVersionResource, error) {
	var out []schema.GroupVersionResource
	seen := map[schema.GroupVersionResource]bool{}
	for _, v := range values {
		gvr, err := parseResource(v)
		if err != nil {
			return nil, err
		}
		if !seen[gvr] {
			seen[gvr] = true
			out = append(out, gvr)
		}
	}
	return out, nil
}

func parseResource(v string) (schema.GroupVersionResource, error) {
	arg := strings.TrimSpace(v)
	if strings.Count(arg, ".") == 1 {
		arg += "." // the core group has no name
	}
	gvr, _ := schema.ParseResourceArg(arg)
	if gvr == nil || gvr.Resource == "" || gvr.Version == "" {
		return schema.GroupVersionResource{}, fmt.Errorf("--unstructured-resource %q: want resource.version.group (e.g. certificates.v1.cert-manager.io) or resource.version for the core group", v)
	}
	for _, part := range []string{gvr.Resource, gvr.Version} {
		if errs := validation.IsDNS1123Label(part); len(errs) > 0 {
			return schema.GroupVersionResource{}, fmt.Errorf("--unstructured-resource %q: %q: %s", v, part, strings.Join(errs, "; "))
		}
	}
	if gvr.Group != "" {
		if errs := validation.IsDNS1123Subdomain(gvr.Group); len(errs) > 0 {
			return schema.GroupVersionResource{}, fmt.Errorf("--unstructured-resource %q: group %q: %s", v, gvr.Group, strings.Join(errs, "; "))
		}
	}
	return *gvr, nil
}

// One source reads several resources whose objects may share a name, so a
// key's name carries the resource as kubectl spells it:
// "<resource>.<group>/<name>", e.g. "virtualmachineinstances.kubevirt.io/vm1",
// or "configmaps/web" for the core group. The version is left out: moving
// a resource to another version keeps its objects' subjects.

// qualifier is the resource's part of a key name, with its '/'.
func qualifier(gvr schema.GroupVersionResource) string { return gvr.GroupResource().String() + "/" }

// keyOf is the source's key of the object ns/name of resource gvr.
func keyOf(gvr schema.GroupVersionResource, ns, name string) source.Key {
	return source.Key{Namespace: ns, Name: qualifier(gvr) + name}
}

// objectKey returns the object's own key within resource gvr; ok is false
// for a key of another resource.
func objectKey(gvr schema.GroupVersionResource, key source.Key) (source.Key, bool) {
	name, ok := strings.CutPrefix(key.Name, qualifier(gvr))
	if !ok || name == "" || strings.Contains(name, "/") {
		return source.Key{}, false
	}
	return source.Key{Namespace: key.Namespace, Name: name}, true
}
