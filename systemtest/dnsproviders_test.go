//go:build externaldns

package systemtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/moto"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// teams is one zonestream serving two teams and the platform: team-a and
// team-b each declare a DNSProvider on their own BIND server and zone,
// with its TSIG key in a Secret of their namespace; the platform declares
// a ClusterDNSProvider on Route53 (moto: no Route53 runs here) and keeps a
// provider declared by flags for the parent zone.
type teams struct {
	t      *testing.T
	ctx    context.Context
	kube   *kube.Cluster
	dyn    dynamic.Interface
	a, b   *bind.Server // team-a's a.teams.test, team-b's b.teams.test
	parent *bind.Server // the platform's teams.test, declared by flags
	r53    *moto.Route53
	cloud  string // the Route53 zone's id
	bus    string // the NATS URL every stage uses
}

const (
	teamsZone = "teams.test"
	zoneA     = "a." + teamsZone
	zoneB     = "b." + teamsZone
	zoneCloud = "cloud.test"
	awsSecret = "platform-aws-secret-key-never-on-the-bus"
)

// TestDNSProvidersPerNamespace: records land only in the zone of the team
// that asked; a team asking for a name in another team's zone is refused
// with a reason; wrong credentials in one provider leave the others
// applying; a quota is enforced; a Secret fixed mid-run is used without a
// restart; a DNSProvider deleted keeps its records; and nothing of any
// Secret is on the bus.
func TestDNSProvidersPerNamespace(t *testing.T) {
	w := startTeams(t)

	// team-a's name is wanted before its provider exists: the figure is
	// the time from the DNSProvider's creation to its first record.
	w.endpoint("team-a", "www", "www."+zoneA, "192.0.2.1")
	created := time.Now()
	w.provider("team-a", "dns", w.a, zoneA, 0)
	waitForRecords(t, w.a, "www."+zoneA, dns.TypeA, []string{"192.0.2.1"})
	t.Logf("DNSProvider created -> its first record answered by its BIND: %s", time.Since(created).Round(time.Millisecond))
	w.waitProviderReady("team-a", "dns", "True")

	w.provider("team-b", "dns", w.b, zoneB, 2)
	w.waitProviderReady("team-b", "dns", "True")

	// Each team's names land in its own zone, the platform's in Route53
	// (a ClusterDNSProvider serves every namespace), the default
	// namespace's Service in the zone declared by flags.
	w.endpoint("team-b", "one", "one."+zoneB, "192.0.2.11")
	w.endpoint("team-a", "api", "api."+zoneCloud, "192.0.2.30")
	w.service("default", "web", "web."+teamsZone, "192.0.2.40")
	waitForRecords(t, w.b, "one."+zoneB, dns.TypeA, []string{"192.0.2.11"})
	w.waitRoute53("api." + zoneCloud)
	waitForRecords(t, w.parent, "web."+teamsZone, dns.TypeA, []string{"192.0.2.40"})
	w.noRecord(w.a, "one."+zoneB)

	// team-b asks for a name in team-a's zone: refused with a reason, and
	// written neither into team-a's zone nor into the wider zone above it.
	w.endpoint("team-b", "intruder", "intruder."+zoneA, "203.0.113.66")
	w.waitEndpoint("team-b", "intruder", "False", "NamespaceNotAllowed", "team-a/dns")
	w.noRecord(w.a, "intruder."+zoneA)
	w.noRecord(w.parent, "intruder."+zoneA)

	// team-b's quota is 2 names: the third is refused, its status says so.
	w.endpoint("team-b", "two", "two."+zoneB, "192.0.2.12")
	waitForRecords(t, w.b, "two."+zoneB, dns.TypeA, []string{"192.0.2.12"})
	w.endpoint("team-b", "three", "three."+zoneB, "192.0.2.13")
	w.waitEndpoint("team-b", "three", "False", "OverQuota", "")
	w.noRecord(w.b, "three."+zoneB)
	w.deleteEndpoint("team-b", "three")

	// team-b's Secret goes wrong: its provider says so; team-a's goes on.
	w.secret("team-b", "dns", map[string]string{"rfc2136-tsig-secret": "d3JvbmcgYnV0IHdlbGwgZm9ybWVkIGtleSBmb3IgdGVzdA=="})
	w.waitProviderReady("team-b", "dns", "False")
	w.deleteEndpoint("team-b", "two") // waits: team-b's provider cannot apply now
	w.endpoint("team-a", "later", "later."+zoneA, "192.0.2.2")
	waitForRecords(t, w.a, "later."+zoneA, dns.TypeA, []string{"192.0.2.2"})
	waitForRecords(t, w.b, "two."+zoneB, dns.TypeA, []string{"192.0.2.12"})

	// The right key again, without a restart: the waiting delete goes.
	w.secret("team-b", "dns", map[string]string{"rfc2136-tsig-secret": w.b.Secret})
	w.waitProviderReady("team-b", "dns", "True")
	waitForRecords(t, w.b, "two."+zoneB, dns.TypeA, nil)
	waitForRecords(t, w.b, "one."+zoneB, dns.TypeA, []string{"192.0.2.11"})

	// team-b declares a provider of its own for team-a's zone: a tie. Both
	// objects say so; team-a's new name goes nowhere, what its zone holds
	// stays; once team-b's claim goes, the name lands.
	grab := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "zonestream.io/v1alpha1", "kind": "DNSProvider",
		"metadata": map[string]any{"name": "grab", "namespace": "team-b"},
		"spec":     map[string]any{"provider": "inmemory", "settings": map[string]any{"inmemory-zone": zoneA}}}}
	if _, err := w.dyn.Resource(dnsProviders).Namespace("team-b").Create(w.ctx, grab, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.waitProviderCondition("team-a", "dns", "Conflict", "True", "DNSProvider team-b/grab")
	w.waitProviderCondition("team-b", "grab", "Conflict", "True", "DNSProvider team-a/dns")
	w.endpoint("team-a", "tied", "tied."+zoneA, "192.0.2.4")
	w.waitEndpoint("team-a", "tied", "False", "ProviderTie", "team-b/grab")
	w.noRecord(w.a, "tied."+zoneA)
	waitForRecords(t, w.a, "www."+zoneA, dns.TypeA, []string{"192.0.2.1"})
	if err := w.dyn.Resource(dnsProviders).Namespace("team-b").Delete(w.ctx, "grab", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForRecords(t, w.a, "tied."+zoneA, dns.TypeA, []string{"192.0.2.4"})
	w.waitProviderCondition("team-a", "dns", "Conflict", "False", "")

	// team-a's DNSProvider is deleted (deletionPolicy Retain, the
	// default): its records stay in its zone, and nothing more lands there.
	if err := w.dyn.Resource(dnsProviders).Namespace("team-a").Delete(w.ctx, "dns", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.endpoint("team-a", "after", "after."+zoneA, "192.0.2.3")
	waitForRecords(t, w.parent, "after."+zoneA, dns.TypeA, []string{"192.0.2.3"}) // the wider zone serves it now
	waitForRecords(t, w.a, "www."+zoneA, dns.TypeA, []string{"192.0.2.1"})
	waitForRecords(t, w.a, "later."+zoneA, dns.TypeA, []string{"192.0.2.2"})
	w.noRecord(w.a, "after."+zoneA)

	w.noSecretOnTheBus()
}

func startTeams(t *testing.T) *teams {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cluster := kube.StartT(t, "../deploy/crds")
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	w := &teams{t: t, ctx: ctx, kube: cluster, dyn: dyn,
		a: bind.StartT(t, zoneA), b: bind.StartT(t, zoneB), parent: bind.StartT(t, teamsZone)}
	w.r53 = moto.Route53T(t)
	w.cloud = w.r53.CreateZone(t, zoneCloud)
	for _, ns := range []string{"team-a", "team-b", "platform"} {
		if _, err := cluster.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w.secret("team-a", "dns", map[string]string{"rfc2136-tsig-secret": w.a.Secret})
	w.secret("team-b", "dns", map[string]string{"rfc2136-tsig-secret": w.b.Secret})
	w.secret("platform", "aws", map[string]string{"AWS_ACCESS_KEY_ID": "platform-key-id", "AWS_SECRET_ACCESS_KEY": awsSecret})
	w.clusterProvider("public", "platform", "aws")

	w.bus = natsenv.StartT(t).ClientURL()
	// Route53's address and region come from the environment as for any
	// AWS program; its credentials do not: the ClusterDNSProvider's Secret
	// has them.
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "AWS_ACCESS_KEY_ID") && !strings.HasPrefix(k, "AWS_SECRET_ACCESS_KEY") &&
			!strings.HasPrefix(k, "AWS_SESSION_TOKEN") {
			env = append(env, kv)
		}
	}
	// The platform's own zone by flags; no --domain-filter: it is the
	// planner's, for every provider, and the teams' zones are not in it.
	flags := slices.DeleteFunc(rfc2136Flags(w.parent, teamsZone, "platform"), func(f string) bool {
		return strings.HasPrefix(f, "--domain-filter=")
	})
	startWithEnv(t, "zonestream", binary, env, append(flags, "--kubeconfig="+cluster.Kubeconfig, "--source=crd", "--source=service",
		"--nats-url="+w.bus, "--metrics-address=127.0.0.1:0", "--interval=5s", "--dnsproviders")...)
	return w
}

func (w *teams) secret(ns, name string, data map[string]string) {
	w.t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, StringData: data}
	secrets := w.kube.Client.CoreV1().Secrets(ns)
	if old, err := secrets.Get(w.ctx, name, metav1.GetOptions{}); err == nil {
		old.Data, old.StringData = nil, data
		if _, err := secrets.Update(w.ctx, old, metav1.UpdateOptions{}); err != nil {
			w.t.Fatal(err)
		}
		return
	}
	if _, err := secrets.Create(w.ctx, s, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// provider declares team ns' DNSProvider on BIND server s for zone.
func (w *teams) provider(ns, name string, s *bind.Server, zone string, quota int64) {
	w.t.Helper()
	spec := map[string]any{
		"provider": "rfc2136",
		"settings": map[string]any{"rfc2136-host": "127.0.0.1", "rfc2136-port": strconv.Itoa(s.Port), "rfc2136-zone": zone,
			"rfc2136-tsig-keyname": s.KeyName, "rfc2136-tsig-secret-alg": s.Algorithm, "rfc2136-tsig-axfr": "true"},
		"credentials": map[string]any{"secretRef": map[string]any{"name": name}},
		"domains":     map[string]any{"include": []any{zone}},
	}
	if quota > 0 {
		spec["quota"] = quota
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "zonestream.io/v1alpha1", "kind": "DNSProvider",
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}}
	if _, err := w.dyn.Resource(dnsProviders).Namespace(ns).Create(w.ctx, u, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// clusterProvider declares the platform's Route53, for every namespace.
func (w *teams) clusterProvider(name, secretNamespace, secret string) {
	w.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "zonestream.io/v1alpha1", "kind": "ClusterDNSProvider",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"provider":    "aws",
			"settings":    map[string]any{"aws-zone-type": "public"},
			"credentials": map[string]any{"secretRef": map[string]any{"name": secret, "namespace": secretNamespace}},
			"domains":     map[string]any{"include": []any{zoneCloud}},
		}}}
	if _, err := w.dyn.Resource(clusterDNSProviders).Create(w.ctx, u, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *teams) endpoint(ns, name, dnsName, ip string) {
	w.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{"endpoints": []any{map[string]any{
			"dnsName": dnsName, "recordType": "A", "targets": []any{ip}}}},
	}}
	if _, err := w.dyn.Resource(dnsEndpoints).Namespace(ns).Create(w.ctx, u, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *teams) deleteEndpoint(ns, name string) {
	w.t.Helper()
	if err := w.dyn.Resource(dnsEndpoints).Namespace(ns).Delete(w.ctx, name, metav1.DeleteOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

func (w *teams) service(ns, name, hostname, ip string) {
	w.t.Helper()
	if err := setLoadBalancer(w.ctx, w.kube.Client.CoreV1().Services(ns), name,
		map[string]string{"external-dns.alpha.kubernetes.io/hostname": hostname}, ip); err != nil {
		w.t.Fatal(err)
	}
}

// readyCondition is obj's Ready condition, nil when it has none.
func readyCondition(obj *unstructured.Unstructured) *metav1.Condition {
	return conditionOf(obj, "Ready")
}

// conditionOf is obj's condition of type typ, nil when it has none.
func conditionOf(obj *unstructured.Unstructured, typ string) *metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var conds []metav1.Condition
	for _, r := range raw {
		var c metav1.Condition
		if m, ok := r.(map[string]any); ok && runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
			conds = append(conds, c)
		}
	}
	return apimeta.FindStatusCondition(conds, typ)
}

func (w *teams) waitProviderReady(ns, name, status string) {
	w.t.Helper()
	waitUntil(w.t, "DNSProvider "+ns+"/"+name+" Ready="+status, 2*time.Minute, func() error {
		u, err := w.dyn.Resource(dnsProviders).Namespace(ns).Get(w.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c := readyCondition(u); c == nil || string(c.Status) != status {
			st, _, _ := unstructured.NestedMap(u.Object, "status")
			return fmt.Errorf("status %v", st)
		}
		return nil
	})
}

func (w *teams) waitProviderCondition(ns, name, typ, status, message string) {
	w.t.Helper()
	waitUntil(w.t, "DNSProvider "+ns+"/"+name+" "+typ+"="+status, 2*time.Minute, func() error {
		u, err := w.dyn.Resource(dnsProviders).Namespace(ns).Get(w.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c := conditionOf(u, typ); c == nil || string(c.Status) != status || !strings.Contains(c.Message, message) {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
}

func (w *teams) waitEndpoint(ns, name, status, reason, message string) {
	w.t.Helper()
	waitUntil(w.t, "DNSEndpoint "+ns+"/"+name+" Ready="+status+" "+reason, 2*time.Minute, func() error {
		u, err := w.dyn.Resource(dnsEndpoints).Namespace(ns).Get(w.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if c := readyCondition(u); c == nil || string(c.Status) != status || c.Reason != reason || !strings.Contains(c.Message, message) {
			return fmt.Errorf("condition %+v", c)
		}
		return nil
	})
}

// noRecord checks that s holds nothing at name, once the pipeline has had
// the time to put something there.
func (w *teams) noRecord(s *bind.Server, name string) {
	w.t.Helper()
	time.Sleep(2 * time.Second)
	for _, qtype := range []uint16{dns.TypeA, dns.TypeTXT} {
		if rrs, err := s.Query(name, qtype); err == nil && len(rrs) > 0 {
			w.t.Fatalf("BIND on port %d holds %s %s: %v", s.Port, name, dns.TypeToString[qtype], rrs)
		}
	}
}

func (w *teams) waitRoute53(name string) {
	w.t.Helper()
	waitUntil(w.t, name+" in Route53", time.Minute, func() error {
		sets, err := w.r53.RecordSets(w.ctx, w.cloud)
		if err != nil {
			return err
		}
		for _, s := range sets {
			if strings.HasPrefix(s, name+" A ") {
				return nil
			}
		}
		return fmt.Errorf("record sets %q", sets)
	})
}

// noSecretOnTheBus reads every message of every stream, headers and
// payload, for any credential of any Secret.
func (w *teams) noSecretOnTheBus() {
	w.t.Helper()
	_, js := natsenv.Connect(w.t, w.bus)
	secrets := [][]byte{[]byte(w.a.Secret), []byte(w.b.Secret), []byte(awsSecret)}
	names := js.StreamNames(w.ctx)
	read := 0
	for stream := range names.Name() {
		s, err := js.Stream(w.ctx, stream)
		if err != nil {
			w.t.Fatal(err)
		}
		info, err := s.Info(w.ctx)
		if err != nil {
			w.t.Fatal(err)
		}
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
			m, err := s.GetMsg(w.ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			if err != nil {
				w.t.Fatal(err)
			}
			read++
			raw := append(slices.Clone(m.Data), []byte(fmt.Sprint(m.Header))...)
			for _, secret := range secrets {
				if bytes.Contains(raw, secret) {
					w.t.Fatalf("a Secret's value is on the bus: stream %s, subject %s", stream, m.Subject)
				}
			}
		}
	}
	if err := names.Err(); err != nil {
		w.t.Fatal(err)
	}
	if read < 20 {
		w.t.Fatalf("read only %d messages on the bus: not the pipeline's", read)
	}
	w.t.Logf("no Secret's value in any of the %d messages on the bus", read)
}
