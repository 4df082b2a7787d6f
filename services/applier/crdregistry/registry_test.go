package crdregistry_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/crdregistry"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

const (
	zone  = "crd.test"
	owner = "x"
	// ExternalDNS' object names (recordObjectName), from python3 hashlib.
	wwwObject = "www-crd-test-6103b3e8"
	newObject = "new-crd-test-af74e35f"
)

// world is a real kube-apiserver with ExternalDNS' DNSRecord CRD, a real
// BIND holding the zone, and the rfc2136 provider seen through the
// CRD registry.
type world struct {
	reg  provider.Provider
	dns  *bind.Server
	objs dynamic.ResourceInterface
}

func start(t *testing.T) *world {
	t.Helper()
	b := bind.StartT(t, zone)
	rp, err := rfc2136.New(rfc2136.Config{Host: b.Host, Port: b.Port, Zones: []string{zone},
		TSIGKeyName: b.KeyName, TSIGSecret: b.Secret, TSIGSecretAlg: b.Algorithm, TSIGAXFR: true, BatchChangeSize: 50,
		RetryConfig: provider.RetryConfig{Timeout: 2 * time.Second, Retries: 1, RetryBackoff: 10 * time.Millisecond}},
		provider.Options{DefaultTTL: 300, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	w := startWith(t, rp)
	w.dns = b
	return w
}

// startWith is world around another provider than BIND's.
func startWith(t *testing.T, rp provider.Provider) *world {
	t.Helper()
	cluster := kube.StartT(t, "testdata")
	store, err := crdregistry.Config{Enabled: true, Namespace: "default", OwnerID: owner, RESTConfig: cluster.Config}.NewStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &world{reg: provider.Checked(crdregistry.Wrap(rp, store)),
		objs: dyn.Resource(crdregistry.Resource).Namespace("default")}
}

// plant writes RRs into BIND behind zonestream's back.
func (w *world) plant(t *testing.T, rrs ...string) {
	t.Helper()
	var insert []dns.RR
	for _, s := range rrs {
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		insert = append(insert, rr)
	}
	if err := w.dns.Update(zone, insert, nil); err != nil {
		t.Fatal(err)
	}
}

// externalDNSRecord writes the DNSRecord ExternalDNS v0.23 writes for an A
// record it applied: Ready=True, Programmed.
func (w *world) externalDNSRecord(t *testing.T, name, host, ip, resource string) {
	t.Helper()
	w.externalDNSRecordOf(t, owner, name, host, ip, resource)
}

// externalDNSRecordOf is externalDNSRecord for another owner.
func (w *world) externalDNSRecordOf(t *testing.T, owner, name, host, ip, resource string) {
	t.Helper()
	ctx := context.Background()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSRecord",
		"metadata": map[string]any{"name": name, "namespace": "default",
			"labels": map[string]any{crdregistry.OwnerLabel: owner}},
		"spec": map[string]any{"endpoint": map[string]any{"dnsName": host, "recordType": "A", "targets": []any{ip},
			"recordTTL": int64(300), "labels": map[string]any{"owner": owner, "resource": resource}}},
	}}
	created, err := w.objs.Create(ctx, u, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True",
		"reason": "Programmed", "message": "Endpoint applied to the DNS provider", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	if _, err := w.objs.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// object reads a DNSRecord; nil when there is none.
func (w *world) object(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := w.objs.Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// ready is the Ready condition's status and reason.
func ready(u *unstructured.Unstructured) (status, reason string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == "Ready" {
			return m["status"].(string), m["reason"].(string)
		}
	}
	return "", ""
}

// inDNS is what BIND answers for name/qtype, as text after the header.
func (w *world) inDNS(t *testing.T, name string, qtype uint16) []string {
	t.Helper()
	rrs, err := w.dns.Query(name, qtype)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, rr := range rrs {
		if rr.Header().Rrtype == qtype && rr.Header().Name == dns.Fqdn(name) {
			out = append(out, strings.TrimPrefix(rr.String(), rr.Header().String()))
		}
	}
	slices.Sort(out)
	return out
}

func (w *world) records(t *testing.T) map[events.RRsetKey]events.Endpoint {
	t.Helper()
	eps, err := w.reg.Records(context.Background(), zone)
	if err != nil {
		t.Fatal(err)
	}
	out := map[events.RRsetKey]events.Endpoint{}
	for _, ep := range eps {
		out[ep.Key()] = ep
	}
	return out
}

func a(name string, ttl int64, ip string) *events.Endpoint {
	ep := events.NewEndpoint(name, "A", ttl, ip)
	return &ep
}

func txt(name, s string) *events.Endpoint {
	ep := events.NewEndpoint(name, "TXT", 300, s)
	return &ep
}

func aKey(name string) events.RRsetKey   { return events.RRsetKey{DNSName: name, RecordType: "A"} }
func txtKey(name string) events.RRsetKey { return events.RRsetKey{DNSName: name, RecordType: "TXT"} }

const (
	wwwOwnership = "heritage=external-dns,external-dns/owner=x,external-dns/resource=service/default/www"
	newOwnership = "heritage=external-dns,external-dns/owner=x,external-dns/resource=service/default/new"
)

// TestRegistryKeepsOwnershipInDNSRecords: ownership ExternalDNS keeps in a
// DNSRecord is read as the planner reads a TXT registry record, and a
// plan's ownership changes become DNSRecords, never DNS records; a
// leftover TXT registry string is neither read nor touched; a record
// without a DNSRecord is shown as no one's.
func TestRegistryKeepsOwnershipInDNSRecords(t *testing.T) {
	w := start(t)
	ctx := context.Background()
	w.plant(t, "www.crd.test. 300 IN A 10.0.0.1", "other.crd.test. 300 IN A 10.0.0.9",
		`a-other.crd.test. 300 IN TXT "heritage=external-dns,external-dns/owner=x"`)
	w.externalDNSRecord(t, wwwObject, "www.crd.test", "10.0.0.1", "service/default/www")

	// What the planner sees: ownership of www (a virtual a-www), none of
	// other, and no trace of the TXT registry string at a-other.
	got := w.records(t)
	if v := got[txtKey("a-www.crd.test")]; !slices.Equal(v.Targets, []string{wwwOwnership}) {
		t.Fatalf("ownership of www seen as %v, want %q", v.Targets, wwwOwnership)
	}
	if _, ok := got[txtKey("a-other.crd.test")]; ok {
		t.Fatal("a TXT registry string in the zone counts in crd mode")
	}
	if _, ok := got[aKey("other.crd.test")]; !ok {
		t.Fatal("other's A record is not listed")
	}

	// Take www over: its record updated, its DNSRecord with it.
	if err := w.reg.Apply(ctx, zone, []events.Change{{Old: a("www.crd.test", 300, "10.0.0.1"), New: a("www.crd.test", 300, "10.0.0.2")}}); err != nil {
		t.Fatal(err)
	}
	if got := w.inDNS(t, "www.crd.test", dns.TypeA); !slices.Equal(got, []string{"10.0.0.2"}) {
		t.Fatalf("BIND's www: %v", got)
	}
	u := w.object(t, wwwObject)
	if targets, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "endpoint", "targets"); !slices.Equal(targets, []string{"10.0.0.2"}) {
		t.Fatalf("www's DNSRecord holds %v", targets)
	}
	if s, r := ready(u); s != "True" || r != "Programmed" {
		t.Fatalf("www's DNSRecord is %s/%s", s, r)
	}

	// A new name: its record in BIND, its ownership in a DNSRecord as
	// ExternalDNS writes it, and no TXT record anywhere.
	if err := w.reg.Apply(ctx, zone, []events.Change{{New: txt("a-new.crd.test", newOwnership)}, {New: a("new.crd.test", 120, "10.0.0.3")}}); err != nil {
		t.Fatal(err)
	}
	if got := w.inDNS(t, "new.crd.test", dns.TypeA); !slices.Equal(got, []string{"10.0.0.3"}) {
		t.Fatalf("BIND's new: %v", got)
	}
	for _, n := range []string{"a-new.crd.test", "a-www.crd.test", "new.crd.test", "www.crd.test"} {
		if got := w.inDNS(t, n, dns.TypeTXT); len(got) != 0 {
			t.Fatalf("a TXT record at %s: %v", n, got)
		}
	}
	u = w.object(t, newObject)
	if u == nil {
		t.Fatalf("no DNSRecord %s", newObject)
	}
	if l := u.GetLabels()[crdregistry.OwnerLabel]; l != owner {
		t.Fatalf("owner label %q", l)
	}
	ep, _, _ := unstructured.NestedMap(u.Object, "spec", "endpoint")
	want := map[string]any{"dnsName": "new.crd.test", "recordType": "A", "targets": []any{"10.0.0.3"}, "recordTTL": int64(120),
		"labels": map[string]any{"owner": owner, "resource": "service/default/new"}}
	for k, v := range want {
		if !equalJSON(ep[k], v) {
			t.Fatalf("spec.endpoint.%s = %#v, want %#v (%v)", k, ep[k], v, ep)
		}
	}
	if s, r := ready(u); s != "True" || r != "Programmed" {
		t.Fatalf("new's DNSRecord is %s/%s", s, r)
	}
	if v := w.records(t)[txtKey("a-new.crd.test")]; !slices.Equal(v.Targets, []string{newOwnership}) {
		t.Fatalf("ownership of new seen as %v", v.Targets)
	}

	// A plan made from ownership that is no longer so is stale: nothing done.
	err := w.reg.Apply(ctx, zone, []events.Change{{Old: txt("a-other.crd.test", "heritage=external-dns,external-dns/owner=x"), New: nil},
		{Old: a("other.crd.test", 300, "10.0.0.9")}})
	if !errors.Is(err, provider.ErrStale) {
		t.Fatalf("a plan deleting other from made-up ownership: %v, want stale", err)
	}

	// new goes: the record, then its DNSRecord.
	if err := w.reg.Apply(ctx, zone, []events.Change{{Old: a("new.crd.test", 120, "10.0.0.3")}, {Old: txt("a-new.crd.test", newOwnership)}}); err != nil {
		t.Fatal(err)
	}
	if got := w.inDNS(t, "new.crd.test", dns.TypeA); len(got) != 0 {
		t.Fatalf("BIND's new: %v", got)
	}
	if w.object(t, newObject) != nil {
		t.Fatal("new's DNSRecord outlived its record")
	}

	// Nothing of other's was touched, the TXT registry string neither.
	if got := w.inDNS(t, "other.crd.test", dns.TypeA); !slices.Equal(got, []string{"10.0.0.9"}) {
		t.Fatalf("BIND's other: %v", got)
	}
	if got := w.inDNS(t, "a-other.crd.test", dns.TypeTXT); !slices.Equal(got, []string{`"heritage=external-dns,external-dns/owner=x"`}) {
		t.Fatalf("BIND's a-other TXT: %v", got)
	}
}

// TestCRDRegistryProviderFailure: a create the provider fails leaves its
// DNSRecord Failed (Ready=False) and the record not owned; retried, it is
// Programmed. An update it fails leaves the DNSRecord as it was,
// Programmed: the provider still holds that, and it stays ours.
func TestCRDRegistryProviderFailure(t *testing.T) {
	w := start(t)
	ctx := context.Background()
	create := []events.Change{{New: txt("a-new.crd.test", newOwnership)}, {New: a("new.crd.test", 300, "10.0.0.3")}}

	if err := w.dns.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := w.reg.Apply(ctx, zone, create); err == nil {
		t.Fatal("applied with BIND down")
	}
	u := w.object(t, newObject)
	if u == nil {
		t.Fatal("no DNSRecord written before the provider call")
	}
	if s, r := ready(u); s != "False" || r != "Failed" {
		t.Fatalf("after a failed create the DNSRecord is %s/%s, want False/Failed", s, r)
	}
	if err := w.dns.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if _, owned := w.records(t)[txtKey("a-new.crd.test")]; owned {
		t.Fatal("a record the provider failed to create counts as owned")
	}

	if err := w.reg.Apply(ctx, zone, create); err != nil {
		t.Fatal(err)
	}
	if s, r := ready(w.object(t, newObject)); s != "True" || r != "Programmed" {
		t.Fatalf("retried, the DNSRecord is %s/%s", s, r)
	}

	if err := w.dns.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := w.reg.Apply(ctx, zone, []events.Change{{Old: a("new.crd.test", 300, "10.0.0.3"), New: a("new.crd.test", 300, "10.0.0.4")}}); err == nil {
		t.Fatal("applied with BIND down")
	}
	u = w.object(t, newObject)
	if targets, _, _ := unstructured.NestedStringSlice(u.Object, "spec", "endpoint", "targets"); !slices.Equal(targets, []string{"10.0.0.3"}) {
		t.Fatalf("after a failed update the DNSRecord holds %v, want what BIND holds", targets)
	}
	if s, r := ready(u); s != "True" || r != "Programmed" {
		t.Fatalf("after a failed update the DNSRecord is %s/%s, want True/Programmed", s, r)
	}
	if err := w.dns.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if v := w.records(t)[txtKey("a-new.crd.test")]; !slices.Equal(v.Targets, []string{newOwnership}) {
		t.Fatalf("after a failed update new's ownership is %v", v.Targets)
	}
}

func equalJSON(a, b any) bool {
	switch av := a.(type) {
	case []any:
		bv, ok := b.([]any)
		return ok && slices.EqualFunc(av, bv, equalJSON)
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k := range av {
			if !equalJSON(av[k], bv[k]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// TestApexOwnershipSharesTheUsersTXT: at the apex, where the ownership
// record is the apex TXT itself, the user's TXT there (an SPF record) is
// shown with our virtual string beside it, listing the types it owns
// (record-type/A=managed, which the planner keeps), and is never touched
// when only the ownership changes.
func TestApexOwnershipSharesTheUsersTXT(t *testing.T) {
	w := start(t)
	ctx := context.Background()
	w.plant(t, `crd.test. 600 IN TXT "v=spf1 -all"`)
	spf := w.records(t)[txtKey(zone)]
	if len(spf.Targets) != 1 {
		t.Fatalf("the apex TXT is listed as %v", spf.Targets)
	}
	claim := "heritage=external-dns,external-dns/owner=x,external-dns/resource=service/default/apex"
	next := spf
	next.Targets = append(slices.Clone(spf.Targets), claim)
	next.RecordTTL = 300
	if err := w.reg.Apply(ctx, zone, []events.Change{{Old: &spf, New: &next}, {New: a(zone, 300, "10.0.0.5")}}); err != nil {
		t.Fatal(err)
	}
	if got := w.inDNS(t, zone, dns.TypeA); !slices.Equal(got, []string{"10.0.0.5"}) {
		t.Fatalf("BIND's apex A: %v", got)
	}
	rrs, err := w.dns.Query(zone, dns.TypeTXT)
	if err != nil || len(rrs) != 1 || rrs[0].Header().Ttl != 600 || strings.Join(rrs[0].(*dns.TXT).Txt, "") != "v=spf1 -all" {
		t.Fatalf("BIND's apex TXT: %v %v, want the SPF record untouched", rrs, err)
	}
	u := w.object(t, crdregistry.ObjectName(aKey(zone)))
	if u == nil {
		t.Fatal("no DNSRecord for the apex A")
	}
	if s, r := ready(u); s != "True" || r != "Programmed" {
		t.Fatalf("the apex DNSRecord is %s/%s", s, r)
	}
	want := append(slices.Clone(spf.Targets), claim+",record-type/A=managed")
	slices.Sort(want)
	if got := w.records(t)[txtKey(zone)].Targets; !slices.Equal(got, want) {
		t.Fatalf("the apex TXT is seen as %v, want %v", got, want)
	}
}

// TestUnreadableDNSRecordCountsAsNoOnes: a DNSRecord of ours the API
// accepts but that names no record (spec.endpoint without dnsName) is
// skipped, logged and counted; the listing goes on, and the record it might
// have meant is no one's: never touched.
func TestUnreadableDNSRecordCountsAsNoOnes(t *testing.T) {
	w := start(t)
	ctx := context.Background()
	w.plant(t, "www.crd.test. 300 IN A 10.0.0.1")
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSRecord",
		"metadata": map[string]any{"name": "broken", "namespace": "default", "labels": map[string]any{crdregistry.OwnerLabel: owner}},
		"spec":     map[string]any{"endpoint": map[string]any{"recordType": "A", "targets": []any{"10.0.0.1"}}},
	}}
	if _, err := w.objs.Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := counter(t, "zonestream_crd_registry_unreadable_total")
	got := w.records(t)
	if _, ok := got[aKey("www.crd.test")]; !ok {
		t.Fatal("the listing lost www")
	}
	for k := range got {
		if k.RecordType == "TXT" {
			t.Fatalf("ownership seen from an unreadable DNSRecord: %v", k)
		}
	}
	if after := counter(t, "zonestream_crd_registry_unreadable_total"); after <= before {
		t.Fatal("the unreadable DNSRecord was not counted")
	}
}

func counter(t *testing.T, name string) float64 {
	t.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	return 0
}

// TestAcceptedRecordTheProviderHoldsIsCorrected: a DNSRecord left Accepted
// (the applier stopped between the provider call and the status) whose
// record the provider holds as written is marked Programmed at the next
// listing, and owned; one whose record the provider does not hold stays
// Accepted, not owned.
func TestAcceptedRecordTheProviderHoldsIsCorrected(t *testing.T) {
	w := start(t)
	ctx := context.Background()
	w.plant(t, "www.crd.test. 300 IN A 10.0.0.1", "new.crd.test. 300 IN A 10.0.0.7")
	w.externalDNSRecord(t, wwwObject, "www.crd.test", "10.0.0.1", "service/default/www")
	w.externalDNSRecord(t, newObject, "new.crd.test", "10.0.0.3", "service/default/new")
	for _, name := range []string{wwwObject, newObject} {
		u := w.object(t, name)
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		conds[0].(map[string]any)["status"], conds[0].(map[string]any)["reason"] = "False", "Accepted"
		if err := unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.objs.UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got := w.records(t)
	if v := got[txtKey("a-www.crd.test")]; !slices.Equal(v.Targets, []string{wwwOwnership}) {
		t.Fatalf("www, which BIND holds as its DNSRecord says, is not owned: %v", v.Targets)
	}
	if s, r := ready(w.object(t, wwwObject)); s != "True" || r != "Programmed" {
		t.Fatalf("www's DNSRecord is %s/%s", s, r)
	}
	if _, owned := got[txtKey("a-new.crd.test")]; owned {
		t.Fatal("new, which BIND holds otherwise than its DNSRecord says, is owned")
	}
	if s, r := ready(w.object(t, newObject)); s != "False" || r != "Accepted" {
		t.Fatalf("new's DNSRecord is %s/%s", s, r)
	}
}

// TestAliasIsOwnedAsTheCNAMEItStandsFor: an alias A record (Route53's, on
// the inmemory provider, which keeps provider-specific properties) is owned
// by a cname- ownership record, as the planner names it; its DNSRecord is
// the A record's, alias property and all, as ExternalDNS writes it.
func TestAliasIsOwnedAsTheCNAMEItStandsFor(t *testing.T) {
	p, err := inmemory.New(inmemory.Config{Zones: []string{zone}}, provider.Options{DefaultTTL: 300})
	if err != nil {
		t.Fatal(err)
	}
	w := startWith(t, p)
	ctx := context.Background()
	if _, err := w.reg.Zones(ctx); err != nil {
		t.Fatal(err)
	}
	alias := events.NewEndpoint("www.crd.test", "A", 300, "lb.elb.example")
	alias.ProviderSpecific = []events.ProviderSpecificProperty{{Name: "alias", Value: "true"}}
	if err := w.reg.Apply(ctx, zone, []events.Change{{New: txt("cname-www.crd.test", wwwOwnership)}, {New: &alias}}); err != nil {
		t.Fatal(err)
	}
	u := w.object(t, wwwObject)
	if u == nil {
		t.Fatalf("no DNSRecord %s for the alias A", wwwObject)
	}
	ps, _, _ := unstructured.NestedSlice(u.Object, "spec", "endpoint", "providerSpecific")
	if !equalJSON(ps, []any{map[string]any{"name": "alias", "value": "true"}}) {
		t.Fatalf("the alias DNSRecord's providerSpecific: %v", ps)
	}
	got := w.records(t)
	if v := got[txtKey("cname-www.crd.test")]; !slices.Equal(v.Targets, []string{wwwOwnership}) {
		t.Fatalf("the alias is owned as %v", got)
	}
	if _, ok := got[txtKey("a-www.crd.test")]; ok {
		t.Fatal("the alias is owned as an A record too")
	}
	// Its ownership goes with it.
	if err := w.reg.Apply(ctx, zone, []events.Change{{Old: &alias}, {Old: txt("cname-www.crd.test", wwwOwnership)}}); err != nil {
		t.Fatal(err)
	}
	if w.object(t, wwwObject) != nil {
		t.Fatal("the alias' DNSRecord outlived it")
	}
}

// TestAnotherOwnersDNSRecordIsShownAndNeverChanged: a Ready DNSRecord of
// another owner is shown to the planner as that owner's ownership (so it
// is refused as another owner's, not taken for no one's), and a plan that
// would change it is refused, nothing written.
func TestAnotherOwnersDNSRecordIsShownAndNeverChanged(t *testing.T) {
	w := start(t)
	ctx := context.Background()
	w.plant(t, "www.crd.test. 300 IN A 10.0.0.1")
	w.externalDNSRecordOf(t, "y", wwwObject, "www.crd.test", "10.0.0.1", "service/default/www")
	theirs := "heritage=external-dns,external-dns/owner=y,external-dns/resource=service/default/www"
	if v := w.records(t)[txtKey("a-www.crd.test")]; !slices.Equal(v.Targets, []string{theirs}) {
		t.Fatalf("y's ownership of www is seen as %v", v.Targets)
	}
	err := w.reg.Apply(ctx, zone, []events.Change{{Old: txt("a-www.crd.test", theirs), New: txt("a-www.crd.test", wwwOwnership)},
		{Old: a("www.crd.test", 300, "10.0.0.1"), New: a("www.crd.test", 300, "10.0.0.2")}})
	if !errors.Is(err, provider.ErrPermanent) {
		t.Fatalf("a plan taking y's record over: %v, want refused", err)
	}
	if got := w.inDNS(t, "www.crd.test", dns.TypeA); !slices.Equal(got, []string{"10.0.0.1"}) {
		t.Fatalf("BIND's www: %v", got)
	}
	u := w.object(t, wwwObject)
	if o := u.GetLabels()[crdregistry.OwnerLabel]; o != "y" {
		t.Fatalf("y's DNSRecord now names owner %q", o)
	}
	if s, r := ready(u); s != "True" || r != "Programmed" {
		t.Fatalf("y's DNSRecord is %s/%s", s, r)
	}
	// A new record at a name y owns another type of is ours to create.
	if err := w.reg.Apply(ctx, zone, []events.Change{{New: txt("aaaa-www.crd.test", wwwOwnership)}, {New: aaaa("www.crd.test", "2001:db8::1")}}); err != nil {
		t.Fatal(err)
	}
	if got := w.inDNS(t, "www.crd.test", dns.TypeAAAA); !slices.Equal(got, []string{"2001:db8::1"}) {
		t.Fatalf("BIND's www AAAA: %v", got)
	}
}

func aaaa(name, ip string) *events.Endpoint {
	ep := events.NewEndpoint(name, "AAAA", 300, ip)
	return &ep
}
