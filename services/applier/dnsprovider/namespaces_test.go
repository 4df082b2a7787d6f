package dnsprovider_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/dnsprovider"
)

// With --dnsprovider-namespace team-a: team-a's DNSProviders run, team-b's
// are left alone (no applier, no status); ClusterDNSProviders run, with a
// Secret of a watched namespace. At start the zone lists of declared
// providers whose object went while no applier watched are withdrawn;
// those of unwatched namespaces are not this controller's to judge.
func TestWatchedNamespacesAndGoneProviders(t *testing.T) {
	w := startWorld(t)
	w.namespace(t, "team-a")
	w.namespace(t, "team-b")
	ghosts := map[string]bool{"team-a/ghost": true, "/cluster-ghost": true, "team-b/ghost": false} // withdrawn?
	for p := range ghosts {
		ns, name, _ := strings.Cut(p, "/")
		zl := &events.ZoneList{Provider: p, Zones: []string{name + ".example.org"},
			Scope: &events.ProviderScope{Declared: events.DeclaredProvider(ns, name), Namespaces: []string{"*"}}}
		if _, _, err := events.Publish(context.Background(), w.js, events.ZonesSubject(p), zl, ""); err != nil {
			t.Fatal(err)
		}
	}
	w.secret(t, "team-a", "dns", map[string]string{"SDK_KEY": "x"})
	w.secret(t, "team-b", "dns", map[string]string{"SDK_KEY": "x"})
	w.startController(t, "replica-1", func(c *dnsprovider.Config) { c.Namespaces = []string{"team-a"} })

	for p, withdrawn := range ghosts {
		eventually(t, 10*time.Second, func() bool { zl := w.zoneList(t, p); return (zl.Scope == nil) == withdrawn },
			func() string { return p + ": " + dump(w.zoneList(t, p)) })
	}

	w.provider(t, "team-a", "p", inmemorySpec("a.example.org"))
	w.provider(t, "team-b", "p", inmemorySpec("b.example.org"))
	for _, c := range []struct{ name, secretNS string }{{"shared", "team-a"}, {"elsewhere", "team-b"}} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "zonestream.io/v1alpha1", "kind": "ClusterDNSProvider", "metadata": map[string]any{"name": c.name},
			"spec": map[string]any{"provider": "inmemory", "settings": map[string]any{"inmemory-zone": c.name + ".example.org"},
				"credentials": map[string]any{"secretRef": map[string]any{"name": "dns", "namespace": c.secretNS}}}}}
		if _, err := w.dyn.Resource(dnsprovider.ClusterDNSProviders).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w.waitReady(t, "team-a", "p", "True", "ProviderReady")
	clusterReady := func(name string) (string, string, string) {
		u, err := w.dyn.Resource(dnsprovider.ClusterDNSProviders).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return ready(u)
	}
	eventually(t, 30*time.Second, func() bool { s, r, _ := clusterReady("shared"); return s == "True" && r == "ProviderReady" },
		func() string { s, r, m := clusterReady("shared"); return "shared: " + s + " " + r + " " + m })
	eventually(t, 30*time.Second, func() bool { _, r, _ := clusterReady("elsewhere"); return r == "SecretNotFound" },
		func() string { s, r, m := clusterReady("elsewhere"); return "elsewhere: " + s + " " + r + " " + m })
	if zl := w.zoneList(t, "/shared"); zl == nil || zl.Scope == nil || !slices.Equal(zl.Scope.Namespaces, []string{events.AllNamespaces}) {
		t.Fatalf("a ClusterDNSProvider serves every namespace by default: %s", dump(zl))
	}
	time.Sleep(time.Second) // it would have been run by now
	if zl := w.zoneList(t, "team-b/p"); zl != nil {
		t.Fatalf("a DNSProvider of an unwatched namespace was run: %s", dump(zl))
	}
	if zl := w.zoneList(t, "team-b/ghost"); zl.Scope == nil {
		t.Fatal("the zone list of a DNSProvider of an unwatched namespace was withdrawn")
	}
	if s, r, _ := ready(w.get(t, "team-b", "p")); s != "" || r != "" {
		t.Fatalf("a DNSProvider of an unwatched namespace got a status: %s %s", s, r)
	}
}
