package dnsprovider_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/dnsprovider"
)

// What cannot be run is refused with a reason on the object's status and
// nothing runs for it: a credential put in settings (its value repeated
// nowhere), a provider not in this build, a ClusterDNSProvider whose
// secretRef has no namespace, a Secret missing (run once it comes, stopped
// when it goes). A provider that cannot be listed is ListingFailed.
func TestRefusedProviders(t *testing.T) {
	w := startWorld(t)
	w.namespace(t, "team-a")
	w.startController(t, "replica-1")
	const leaked = "c2VjcmV0LWluLXNldHRpbmdz"

	w.provider(t, "team-a", "in-settings", map[string]any{"provider": "rfc2136",
		"settings": map[string]any{"rfc2136-host": "127.0.0.1", "rfc2136-zone": "a.example.org", "rfc2136-tsig-secret": leaked}})
	u := w.waitReady(t, "team-a", "in-settings", "False", "SecretInSettings")
	if _, _, m := ready(u); !strings.Contains(m, "rfc2136-tsig-secret") {
		t.Fatalf("message does not name the flag: %q", m)
	}
	noSecret(t, "status", dump(u.Object["status"]), leaked)

	w.provider(t, "team-a", "cloud", map[string]any{"provider": "aws"})
	u = w.waitReady(t, "team-a", "cloud", "False", "ProviderNotAvailable")
	if _, _, m := ready(u); !strings.Contains(m, "-tags externaldns") {
		t.Fatalf("message does not say how to get the provider: %q", m)
	}

	w.provider(t, "team-a", "not-a-flag", map[string]any{"provider": "inmemory", "settings": map[string]any{"pdns-server": "http://x"}})
	w.waitReady(t, "team-a", "not-a-flag", "False", "InvalidSpec")

	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "zonestream.io/v1alpha1", "kind": "ClusterDNSProvider", "metadata": map[string]any{"name": "shared"},
		"spec": map[string]any{"provider": "inmemory", "credentials": map[string]any{"secretRef": map[string]any{"name": "dns"}}}}}
	if _, err := w.dyn.Resource(dnsprovider.ClusterDNSProviders).Create(context.Background(), cluster, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30e9, func() bool {
		u, err := w.dyn.Resource(dnsprovider.ClusterDNSProviders).Get(context.Background(), "shared", metav1.GetOptions{})
		_, r, _ := ready(u)
		return err == nil && r == "InvalidSpec"
	}, func() string { return "ClusterDNSProvider without secretRef.namespace not refused" })

	w.provider(t, "team-a", "later", map[string]any{"provider": "inmemory", "settings": map[string]any{"inmemory-zone": "later.example.org"},
		"credentials": map[string]any{"secretRef": map[string]any{"name": "later"}}})
	w.waitReady(t, "team-a", "later", "False", "SecretNotFound")
	if zl := w.zoneList(t, events.DeclaredProvider("team-a", "later")); zl != nil {
		t.Fatalf("a provider without its Secret published %s", dump(zl))
	}
	w.secret(t, "team-a", "later", map[string]string{"SOME_SDK_TOKEN": "x"})
	w.waitReady(t, "team-a", "later", "True", "ProviderReady")

	// Its Secret deleted: not run any more, its zone list kept (its names
	// wait for it), its status says why.
	if err := w.cluster.Client.CoreV1().Secrets("team-a").Delete(context.Background(), "later", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.waitReady(t, "team-a", "later", "False", "SecretNotFound")
	if zl := w.zoneList(t, events.DeclaredProvider("team-a", "later")); zl == nil || zl.Scope == nil || len(zl.Zones) != 1 {
		t.Fatalf("the zone list of a provider whose Secret went: %s", dump(zl))
	}

	// A provider whose zones cannot be listed (a webhook nothing answers,
	// its URL carrying a password): ListingFailed, the problem on its zone
	// list, the password nowhere.
	const password = "pw-s3cr3t-in-url"
	w.provider(t, "team-a", "unreachable", map[string]any{"provider": "webhook",
		"settings": map[string]any{"webhook-provider-url": "http://zonestream:" + password + "@127.0.0.1:1"}})
	u = w.waitReady(t, "team-a", "unreachable", "False", "ListingFailed")
	zl := w.zoneList(t, events.DeclaredProvider("team-a", "unreachable"))
	if zl == nil || zl.Scope == nil || zl.Scope.Problem == "" || len(zl.Zones) != 0 {
		t.Fatalf("zone list of a provider that cannot be listed: %s", dump(zl))
	}
	t.Logf("the problem published: %s", zl.Scope.Problem)
	noSecret(t, "status", dump(u.Object["status"]), password)
	noSecret(t, "zone list", dump(zl), password)

	for _, name := range []string{"in-settings", "cloud", "not-a-flag"} {
		if zl := w.zoneList(t, events.DeclaredProvider("team-a", name)); zl != nil {
			t.Fatalf("refused %s published %s", name, dump(zl))
		}
	}
	noSecret(t, "the controller's log", w.logs.String(), leaked, password)
}
