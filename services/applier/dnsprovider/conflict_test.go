package dnsprovider

import (
	"strings"
	"testing"
)

// Two declared providers claiming one domain as specifically are both in
// conflict, each naming the other; one claiming a narrower domain, or
// another zone, is not; a refused object claims nothing.
func TestConflicts(t *testing.T) {
	claiming := func(ns string, include []string, zones ...string) *entry {
		o := object(ns, "inmemory", nil)
		o.Spec.Domains.Include = include
		o.Status.Zones = zones
		return &entry{obj: o}
	}
	refused := claiming("d", []string{"a.example.com"})
	refused.refusal = refuse(ReasonInvalidSpec, "x")
	found := conflicts(map[string]*entry{
		"a/dns": claiming("a", nil, "a.example.com"),
		"b/dns": claiming("b", []string{"a.example.com"}, "example.com"),
		"c/dns": claiming("c", []string{"shop.a.example.com"}, "example.com"),
		"e/dns": claiming("e", nil, "e.example.com"),
		"d/dns": refused,
	})
	if len(found) != 2 || !strings.Contains(found["a/dns"], "DNSProvider b/dns (a.example.com)") ||
		!strings.Contains(found["b/dns"], "DNSProvider a/dns (a.example.com)") {
		t.Fatalf("conflicts: %q, want a/dns and b/dns naming each other", found)
	}
	if c := conflictCondition(found, "c/dns", 3); c.Status != "False" || c.Reason != ReasonNoConflict || c.ObservedGeneration != 3 {
		t.Fatalf("c/dns: %+v", c)
	}
	if c := conflictCondition(found, "a/dns", 1); c.Status != "True" || c.Reason != ReasonTie {
		t.Fatalf("a/dns: %+v", c)
	}
}
