//go:build externaldns

package systemtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/route53"
	r53types "github.com/aws/aws-sdk-go-v2/service/route53/types"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/moto"
)

func init() { binaryTags = "externaldns" }

// TestRoute53AllInOne runs zonestream, built with -tags externaldns, with
// the command line an ExternalDNS user passes for Route53, against a real
// kube-apiserver and Route53 as moto emulates it (no Route53 runs here).
// Services, an Ingress and a DNSEndpoint become A, AAAA, CNAME and
// ownership TXT record sets, an ELB hostname alias A and AAAA records,
// weighted and failover set identifiers record sets of their own,
// a change and a delete follow, and a record set zonestream does not own
// is left alone.
func TestRoute53AllInOne(t *testing.T) {
	const zone = "aws.test"
	cluster := kube.StartT(t, "../deploy/crds")
	r53 := moto.Route53T(t)
	zoneID := r53.CreateZone(t, zone)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	unowned := &r53types.ResourceRecordSet{Name: aws.String("legacy." + zone), Type: r53types.RRTypeA, TTL: aws.Int64(300),
		ResourceRecords: []r53types.ResourceRecord{{Value: aws.String("192.0.2.99")}}}
	if _, err := r53.Client.ChangeResourceRecordSets(ctx, &route53.ChangeResourceRecordSetsInput{HostedZoneId: aws.String(zoneID),
		ChangeBatch: &r53types.ChangeBatch{Changes: []r53types.Change{{Action: r53types.ChangeActionCreate, ResourceRecordSet: unowned}}}}); err != nil {
		t.Fatal(err)
	}
	startProcess(t, "zonestream", "--kubeconfig="+cluster.Kubeconfig, "--source=service", "--source=ingress", "--source=crd",
		"--nats-listen=127.0.0.1:0", "--data-dir="+t.TempDir(), "--metrics-address=127.0.0.1:0",
		"--provider=aws", "--aws-zone-type=public", "--aws-batch-change-size=100", "--domain-filter="+zone,
		"--txt-owner-id=e2e", "--policy=sync", "--registry=txt", "--interval=1m")

	services := cluster.Client.CoreV1().Services("default")
	lb := func(name string, annotations map[string]string, addrs ...string) {
		t.Helper()
		if err := setLoadBalancer(ctx, services, name, annotations, addrs...); err != nil {
			t.Fatal(err)
		}
	}
	const ann = "external-dns.alpha.kubernetes.io/"
	owner := func(resource string) string {
		return `"heritage=external-dns,external-dns/owner=e2e,external-dns/resource=` + resource + `"`
	}
	lb("web", map[string]string{ann + "hostname": "web." + zone}, "192.0.2.10", "2001:db8::10")
	// A load balancer with a hostname: ExternalDNS' aws provider makes
	// the CNAME an alias A and AAAA (AdjustEndpoints, asked by the planner).
	const elb = "my-lb-1234.us-east-1.elb.amazonaws.com"
	lb("shop", map[string]string{ann + "hostname": "shop." + zone}, elb)
	// Two weighted record sets at one name; the GA prefix works as well.
	lb("blue", map[string]string{ann + "hostname": "w." + zone, ann + "set-identifier": "blue", ann + "aws-weight": "10"}, "192.0.2.21")
	lb("green", map[string]string{"external-dns.kubernetes.io/hostname": "w." + zone,
		"external-dns.kubernetes.io/set-identifier": "green", "external-dns.kubernetes.io/aws-weight": "20"}, "192.0.2.22")
	// An Ingress: its rule's host, at its load balancer's address.
	ing, err := cluster.Client.NetworkingV1().Ingresses("default").Create(ctx, &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default"},
		Spec:       networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: "api." + zone}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "192.0.2.30"}}
	if _, err := cluster.Client.NetworkingV1().Ingresses("default").UpdateStatus(ctx, ing, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A failover pair.
	for _, f := range []struct{ name, role, ip string }{{"primary", "PRIMARY", "192.0.2.41"}, {"secondary", "SECONDARY", "192.0.2.42"}} {
		lb(f.name, map[string]string{ann + "hostname": "f." + zone, ann + "set-identifier": f.name, ann + "aws-failover": f.role}, f.ip)
	}
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(dnsEndpoints).Namespace("default").Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint",
		"metadata": map[string]any{"name": "docs", "namespace": "default"},
		"spec": map[string]any{"endpoints": []any{map[string]any{
			"dnsName": "docs." + zone, "recordType": "CNAME", "targets": []any{"web." + zone}}}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	holds := func(step string, want ...string) {
		t.Helper()
		want = append(want, "legacy."+zone+" A 192.0.2.99")
		slices.Sort(want)
		var got []string
		waitUntil(t, step, 90*time.Second, func() error {
			got, err = r53.RecordSets(ctx, zoneID)
			if err == nil && !slices.Equal(got, want) {
				err = fmt.Errorf("the hosted zone holds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			return err
		})
	}
	web := []string{
		"web.aws.test A 192.0.2.10", "web.aws.test AAAA 2001:db8::10",
		"a-web.aws.test TXT " + owner("service/default/web"), "aaaa-web.aws.test TXT " + owner("service/default/web"),
	}
	rest := []string{
		"api.aws.test A 192.0.2.30", "a-api.aws.test TXT " + owner("ingress/default/api"),
		"shop.aws.test A alias:" + elb, "shop.aws.test AAAA alias:" + elb,
		// The alias A is owned as the CNAME it stands for, as ExternalDNS
		// names it.
		"cname-shop.aws.test TXT " + owner("service/default/shop"), "aaaa-shop.aws.test TXT " + owner("service/default/shop"),
		"w.aws.test A 192.0.2.21 set=blue weight=10", "w.aws.test A 192.0.2.22 set=green weight=20",
		// Two objects want w.aws.test: its ownership records name no
		// single resource (ExternalDNS would name each set's).
		`a-w.aws.test TXT "heritage=external-dns,external-dns/owner=e2e" set=blue`,
		`a-w.aws.test TXT "heritage=external-dns,external-dns/owner=e2e" set=green`,
		"docs.aws.test CNAME web.aws.test", "cname-docs.aws.test TXT " + owner("crd/default/docs"),
		"f.aws.test A 192.0.2.41 set=primary failover=PRIMARY", "f.aws.test A 192.0.2.42 set=secondary failover=SECONDARY",
		`a-f.aws.test TXT "heritage=external-dns,external-dns/owner=e2e" set=primary`,
		`a-f.aws.test TXT "heritage=external-dns,external-dns/owner=e2e" set=secondary`,
	}
	holds("every object in Route53", append(slices.Clone(web), rest...)...)

	lb("web", nil, "192.0.2.11")
	holds("web's new address", append([]string{"web.aws.test A 192.0.2.11", "a-web.aws.test TXT " + owner("service/default/web")},
		rest...)...)

	// blue's weight alone changes: Route53 gets the new weight.
	blue, err := services.Get(ctx, "blue", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	blue.Annotations[ann+"aws-weight"] = "30"
	if _, err := services.Update(ctx, blue, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	i := slices.Index(rest, "w.aws.test A 192.0.2.21 set=blue weight=10")
	rest[i] = "w.aws.test A 192.0.2.21 set=blue weight=30"
	holds("blue's new weight", append([]string{"web.aws.test A 192.0.2.11", "a-web.aws.test TXT " + owner("service/default/web")},
		rest...)...)

	if err := services.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	holds("web deleted", rest...)
}

// batchedRoute53 is moto's Route53 behind a loopback proxy that keeps the
// body of every change batch sent to it (ChangeResourceRecordSets); the
// environment points the AWS SDK of the processes the test starts at the
// proxy, while Client reaches moto itself.
type batchedRoute53 struct {
	*moto.Route53
	mu      sync.Mutex
	batches []string
}

func route53WithBatches(t testing.TB) *batchedRoute53 {
	t.Helper()
	r := &batchedRoute53{Route53: moto.Route53T(t)}
	target, err := url.Parse(r.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost && strings.HasSuffix(strings.TrimSuffix(req.URL.Path, "/"), "/rrset") {
			body, err := io.ReadAll(req.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			r.mu.Lock()
			r.batches = append(r.batches, string(body))
			r.mu.Unlock()
		}
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(s.Close)
	t.Setenv("AWS_ENDPOINT_URL", s.URL)
	return r
}

// Batches are the change batches sent so far, as their XML bodies.
func (r *batchedRoute53) Batches() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches)
}

// TestRoute53TakesOverAZoneExternalDNSWrote: a hosted zone ExternalDNS
// v0.21.0 wrote for a cluster (an A record, an ELB alias A and AAAA, their
// ownership records), taken over by zonestream with the same owner id and
// the same objects, gets no change batch at all: nothing is recreated,
// rewritten or orphaned. The zone is written by ExternalDNS itself when
// $ZS_EXTERNAL_DNS names its binary (hack/bench-table.sh builds it), else
// planted as it writes it.
func TestRoute53TakesOverAZoneExternalDNSWrote(t *testing.T) {
	const zone = "aws.test"
	cluster := kube.StartT(t)
	r53 := route53WithBatches(t)
	zoneID := r53.CreateZone(t, zone)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	services := cluster.Client.CoreV1().Services("default")
	const ann = "external-dns.alpha.kubernetes.io/hostname"
	const elb = "my-lb-1234.us-east-1.elb.amazonaws.com"
	for _, s := range []struct{ name, addr string }{{"web", "192.0.2.10"}, {"shop", elb}} {
		if err := setLoadBalancer(ctx, services, s.name, map[string]string{ann: s.name + "." + zone}, s.addr); err != nil {
			t.Fatal(err)
		}
	}
	writtenByExternalDNS(t, r53, zoneID, cluster.Kubeconfig, zone)
	before, err := r53.RecordSets(ctx, zoneID)
	if err != nil {
		t.Fatal(err)
	}
	sent := len(r53.Batches())

	startProcess(t, "zonestream", "--kubeconfig="+cluster.Kubeconfig, "--source=service",
		"--nats-listen=127.0.0.1:0", "--data-dir="+t.TempDir(), "--metrics-address=127.0.0.1:0",
		"--provider=aws", "--aws-zone-type=public", "--domain-filter="+zone,
		"--txt-owner-id=e2e", "--policy=sync", "--registry=txt", "--interval=1m")
	// A Service created now is planned after the zone was read and every
	// name taken over was planned: once it is in Route53, what was taken
	// over would have been changed too.
	if err := setLoadBalancer(ctx, services, "probe", map[string]string{ann: "probe." + zone}, "192.0.2.77"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the probe in Route53", 90*time.Second, func() error {
		got, err := r53.RecordSets(ctx, zoneID)
		if err == nil && !slices.Contains(got, "probe."+zone+" A 192.0.2.77") {
			err = fmt.Errorf("no probe yet in %q", got)
		}
		return err
	})
	time.Sleep(2 * time.Second) // a batch for a name taken over would be out by now
	for _, b := range r53.Batches()[sent:] {
		for _, name := range []string{"web", "shop"} {
			if strings.Contains(b, "<Name>"+name+"."+zone) || strings.Contains(b, "-"+name+"."+zone) {
				t.Errorf("a batch touched %s, which ExternalDNS wrote:\n%s", name, b)
			}
		}
	}
	after, err := r53.RecordSets(ctx, zoneID)
	if err != nil {
		t.Fatal(err)
	}
	after = slices.DeleteFunc(after, func(s string) bool { return strings.Contains(s, "probe."+zone) })
	if !slices.Equal(after, before) {
		t.Fatalf("the zone ExternalDNS wrote changed:\n%s\nwas\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
}

// writtenByExternalDNS has ExternalDNS v0.21.0 write the zone for the
// cluster's Services (owner e2e), or plants what it writes.
func writtenByExternalDNS(t *testing.T, r53 *batchedRoute53, zoneID, kubeconfig, zone string) {
	t.Helper()
	if bin := os.Getenv("ZS_EXTERNAL_DNS"); bin != "" {
		out, err := exec.Command(bin, "--once", "--kubeconfig="+kubeconfig, "--source=service", "--provider=aws",
			"--aws-zone-type=public", "--domain-filter="+zone, "--txt-owner-id=e2e", "--policy=sync", "--registry=txt").CombinedOutput()
		if err != nil {
			t.Fatalf("external-dns --once: %v\n%s", err, out)
		}
		return
	}
	owner := func(svc string) *string {
		return aws.String(`"heritage=external-dns,external-dns/owner=e2e,external-dns/resource=service/default/` + svc + `"`)
	}
	txt := func(name, svc string) r53types.ResourceRecordSet {
		return r53types.ResourceRecordSet{Name: aws.String(name + "." + zone), Type: r53types.RRTypeTxt, TTL: aws.Int64(300),
			ResourceRecords: []r53types.ResourceRecord{{Value: owner(svc)}}}
	}
	alias := func(typ r53types.RRType) r53types.ResourceRecordSet {
		return r53types.ResourceRecordSet{Name: aws.String("shop." + zone), Type: typ, AliasTarget: &r53types.AliasTarget{
			DNSName: aws.String("my-lb-1234.us-east-1.elb.amazonaws.com"), HostedZoneId: aws.String("Z35SXDOTRQ7X7K"), EvaluateTargetHealth: true}}
	}
	sets := []r53types.ResourceRecordSet{
		{Name: aws.String("web." + zone), Type: r53types.RRTypeA, TTL: aws.Int64(300),
			ResourceRecords: []r53types.ResourceRecord{{Value: aws.String("192.0.2.10")}}},
		txt("a-web", "web"), alias(r53types.RRTypeA), alias(r53types.RRTypeAaaa), txt("cname-shop", "shop"), txt("aaaa-shop", "shop"),
	}
	var changes []r53types.Change
	for i := range sets {
		changes = append(changes, r53types.Change{Action: r53types.ChangeActionCreate, ResourceRecordSet: &sets[i]})
	}
	if _, err := r53.Client.ChangeResourceRecordSets(context.Background(), &route53.ChangeResourceRecordSetsInput{
		HostedZoneId: aws.String(zoneID), ChangeBatch: &r53types.ChangeBatch{Changes: changes}}); err != nil {
		t.Fatal(err)
	}
}
