package traefik

import (
	"testing"

	"github.com/zonestream/zonestream/services/collector/source"
)

// A key's name carries its kind and reads back to it; the flags choose
// the kinds.
func TestKeys(t *testing.T) {
	all := Kinds(Flags{EnableLegacy: true})
	if len(all) != 6 {
		t.Fatalf("%d kinds with --traefik-enable-legacy, want 6", len(all))
	}
	for _, k := range all {
		key := k.Key("ns", "web")
		got, obj, ok := ParseKey(key, all)
		if !ok || got.GroupVersion != k.GroupVersion || got.Kind != k.Kind || obj != (source.Key{Namespace: "ns", Name: "web"}) {
			t.Errorf("ParseKey(%v) = %v %v %v, want %v ns/web", key, got, obj, ok, k)
		}
		if v, kind, ok := KindOfKey(key.Name); !ok || v != k.GroupVersion.String() || kind != k.Kind {
			t.Errorf("KindOfKey(%q) = %q %q %v", key.Name, v, kind, ok)
		}
	}
	newOnly := Kinds(Flags{})
	legacyKey := all[len(all)-1].Key("ns", "web")
	if _, _, ok := ParseKey(legacyKey, newOnly); ok {
		t.Errorf("ParseKey(%v) found a kind the flags do not select", legacyKey)
	}
	for _, name := range []string{"web", "ingressroutes.traefik.io/", "ingressroutes.traefik.io/a/b", "ingressroutes.example.org/web"} {
		if _, _, ok := ParseKey(source.Key{Namespace: "ns", Name: name}, all); ok {
			t.Errorf("ParseKey(%q) ok, want not a key of the source", name)
		}
	}
	if len(Kinds(Flags{DisableNew: true})) != 0 {
		t.Errorf("--traefik-disable-new alone selects kinds")
	}
}
