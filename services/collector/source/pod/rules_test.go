package pod_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// testPod is a Pod to create in a case's namespace, on Node <ns>-n.
type testPod struct {
	name        string
	labels      map[string]string
	annotations map[string]string
	hostNetwork bool
	ips         []string // status.podIPs; the first is status.podIP
}

// createTestPod creates the Pod and sets its status as a kubelet would.
func createTestPod(t *testing.T, ns string, p testPod) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: ns, Labels: p.labels, Annotations: p.annotations},
		Spec: corev1.PodSpec{NodeName: ns + "-n", HostNetwork: p.hostNetwork,
			Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none"}}},
	}
	got, err := collectortest.Cluster.Client.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Status.Phase = corev1.PodRunning
	for i, ip := range p.ips {
		if i == 0 {
			got.Status.PodIP = ip
		}
		got.Status.PodIPs = append(got.Status.PodIPs, corev1.PodIP{IP: ip})
	}
	if got, err = collectortest.Cluster.Client.CoreV1().Pods(ns).UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return got
}

func podSubject(clusterName, ns, name string) string {
	return events.SourceSubject(clusterName, "pod", ns, name)
}

func podConfig(ns string) collector.Config {
	return collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"pod"}}
}

type podCase struct {
	name string
	cfg  func(*collector.Config)
	pod  testPod
	// want gets the namespace; nil want: nothing is published.
	want func(ns string) []events.Endpoint
}

// runPodRules creates Node <ns>-n (ExternalIP 203.0.113.1, InternalIP
// 10.1.0.1 and fd00::1) and the case's Pod, then starts a collector.
func runPodRules(t *testing.T, cases []podCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			collectortest.CreateNode(t, ns, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-n"}},
				collectortest.ExternalIP("203.0.113.1"), collectortest.InternalIP("10.1.0.1"), collectortest.InternalIP("fd00::1"))
			createTestPod(t, ns, tc.pod)
			collectortest.StartAndExpect(t, podConfig(ns), tc.cfg, podSubject(ns, ns, tc.pod.name), tc.want, ns)
		})
	}
}

// Which names and targets the annotations and --pod-source-domain give.
func TestPodRuleAnnotations(t *testing.T) {
	hostIPs := []events.Endpoint{collectortest.EP("p.example.org", "A", "203.0.113.1"), collectortest.EP("p.example.org", "AAAA", "fd00::1")}
	runPodRules(t, []podCase{
		{name: "internal-hostname: pod IP", pod: testPod{name: "p", hostNetwork: true, ips: []string{"10.0.0.5"},
			annotations: collectortest.Ann("internal-hostname", "p.internal.example.org")},
			want: collectortest.Fixed(collectortest.EP("p.internal.example.org", "A", "10.0.0.5"))},
		{name: "hostname: node external addresses", pod: testPod{name: "p", hostNetwork: true, ips: []string{"10.1.0.1"},
			annotations: collectortest.Ann("hostname", "p.example.org")},
			want: collectortest.Fixed(hostIPs...)},
		{name: "both annotations, stable prefix", pod: testPod{name: "p", hostNetwork: true, ips: []string{"10.1.0.1"},
			annotations: map[string]string{collectortest.Stable + "hostname": "p.example.org", collectortest.Stable + "internal-hostname": "p.internal.example.org"}},
			want: collectortest.Fixed(append([]events.Endpoint{collectortest.EP("p.internal.example.org", "A", "10.1.0.1")}, hostIPs...)...)},
		{name: "target annotation replaces both", pod: testPod{name: "p", hostNetwork: true, ips: []string{"10.0.0.5"},
			annotations: collectortest.Ann("hostname", "p.example.org", "internal-hostname", "p.internal.example.org", "target", "198.51.100.1,lb.example.net")},
			want: collectortest.Fixed(collectortest.EP("p.example.org", "A", "198.51.100.1"), collectortest.EP("p.example.org", "CNAME", "lb.example.net"),
				collectortest.EP("p.internal.example.org", "A", "198.51.100.1"), collectortest.EP("p.internal.example.org", "CNAME", "lb.example.net"))},
		{name: "non-hostNetwork pod ignored", pod: testPod{name: "p", ips: []string{"10.0.0.5"},
			annotations: collectortest.Ann("internal-hostname", "p.internal.example.org")}},
		{name: "--ignore-non-host-network-pods=false", cfg: func(c *collector.Config) { c.Pod.IncludeNonHostNetworkPods = true },
			pod:  testPod{name: "p", ips: []string{"10.0.0.5"}, annotations: collectortest.Ann("internal-hostname", "p.internal.example.org")},
			want: collectortest.Fixed(collectortest.EP("p.internal.example.org", "A", "10.0.0.5"))},
		{name: "--pod-source-domain", cfg: func(c *collector.Config) { c.Pod.SourceDomain = "pods.example.org" },
			pod:  testPod{name: "web-1", hostNetwork: true, ips: []string{"10.0.0.5"}},
			want: collectortest.Fixed(collectortest.EP("web-1.pods.example.org", "A", "10.0.0.5"))},
		{name: "--pod-source-domain with target", cfg: func(c *collector.Config) { c.Pod.SourceDomain = "pods.example.org" },
			pod:  testPod{name: "web-1", hostNetwork: true, ips: []string{"10.0.0.5"}, annotations: collectortest.Ann("target", "198.51.100.1")},
			want: collectortest.Fixed(collectortest.EP("web-1.pods.example.org", "A", "198.51.100.1"))},
		{name: "ipv6 pod IP is AAAA", pod: testPod{name: "p", hostNetwork: true, ips: []string{"fd00::5"},
			annotations: collectortest.Ann("internal-hostname", "p.internal.example.org")},
			want: collectortest.Fixed(collectortest.EP("p.internal.example.org", "AAAA", "fd00::5"))},
		{name: "no pod IP yet", pod: testPod{name: "p", hostNetwork: true, annotations: collectortest.Ann("internal-hostname", "p.internal.example.org")}},
		{name: "invalid hostname entry skipped", pod: testPod{name: "p", hostNetwork: true, ips: []string{"10.0.0.5"},
			annotations: collectortest.Ann("internal-hostname", "a..example.org,ok.example.org")},
			want: collectortest.Fixed(collectortest.EP("ok.example.org", "A", "10.0.0.5"))},
	})
}

// --fqdn-template applies to every Pod (hostNetwork or not) with all its
// Pod IPs, when the annotations gave no name or with --combine-fqdn-annotation.
func TestPodRuleTemplate(t *testing.T) {
	tmpl := func(c *collector.Config) { c.FQDNTemplate = "{{.Name}}.{{.Namespace}}.pods.example.org" }
	runPodRules(t, []podCase{
		{name: "template, dual stack, non-hostNetwork", cfg: tmpl, pod: testPod{name: "p", ips: []string{"10.0.0.5", "fd00::5"}},
			want: func(ns string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP("p."+ns+".pods.example.org", "A", "10.0.0.5"), collectortest.EP("p."+ns+".pods.example.org", "AAAA", "fd00::5")}
			}},
		{name: "template ignores the target annotation", cfg: tmpl,
			pod: testPod{name: "p", ips: []string{"10.0.0.5"}, annotations: collectortest.Ann("target", "198.51.100.1")},
			want: func(ns string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP("p."+ns+".pods.example.org", "A", "10.0.0.5")}
			}},
		{name: "annotations win over template", cfg: tmpl,
			pod:  testPod{name: "p", hostNetwork: true, ips: []string{"10.0.0.5"}, annotations: collectortest.Ann("internal-hostname", "p.internal.example.org")},
			want: collectortest.Fixed(collectortest.EP("p.internal.example.org", "A", "10.0.0.5"))},
		{name: "--combine-fqdn-annotation", cfg: func(c *collector.Config) { tmpl(c); c.CombineFQDNAnnotation = true },
			pod: testPod{name: "p", hostNetwork: true, ips: []string{"10.0.0.5"}, annotations: collectortest.Ann("internal-hostname", "p.internal.example.org")},
			want: func(ns string) []events.Endpoint {
				return []events.Endpoint{collectortest.EP("p.internal.example.org", "A", "10.0.0.5"), collectortest.EP("p."+ns+".pods.example.org", "A", "10.0.0.5")}
			}},
	})
}

// Which Pods: controller, filters; ttl and set-identifier.
func TestPodRuleSelectionAndAnnotations(t *testing.T) {
	named := func(kv ...string) testPod {
		return testPod{name: "p", hostNetwork: true, ips: []string{"10.0.0.5"}, labels: map[string]string{"app": "web"},
			annotations: collectortest.Ann(append([]string{"internal-hostname", "p.internal.example.org"}, kv...)...)}
	}
	one := collectortest.Fixed(collectortest.EP("p.internal.example.org", "A", "10.0.0.5"))
	runPodRules(t, []podCase{
		{name: "controller other", pod: named("controller", "other")},
		{name: "controller dns-controller", pod: named("controller", "dns-controller"), want: one},
		{name: "label filter matches", cfg: func(c *collector.Config) { c.LabelFilter = "app=web" }, pod: named(), want: one},
		{name: "label filter does not match", cfg: func(c *collector.Config) { c.LabelFilter = "app=db" }, pod: named()},
		{name: "annotation filter", cfg: func(c *collector.Config) { c.AnnotationFilter = "team in (dns)" }, pod: named("team/x", "y")},
		{name: "ttl", pod: named("ttl", "120"), want: collectortest.Fixed(events.NewEndpoint("p.internal.example.org", "A", 120, "10.0.0.5"))},
		{name: "set-identifier", pod: named("set-identifier", "blue"), want: collectortest.Fixed(collectortest.WithSetID(collectortest.EP("p.internal.example.org", "A", "10.0.0.5"), "blue"))},
	})
}

// A Pod's bad input is reported on the Pod; its valid endpoints are published.
func TestPodInvalidInputReported(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	before := collectortest.InvalidInput(t, "pod", "InvalidAnnotation")
	createTestPod(t, ns, testPod{name: "p", hostNetwork: true, ips: []string{"10.0.0.5"},
		annotations: collectortest.Ann("ttl", "abc", "target", "10.0.0.999,192.0.2.9", "internal-hostname", "ok.example.org,bad_label-.example.org")})
	collectortest.StartCollector(t, podConfig(ns))
	collectortest.WaitState(t, podSubject(ns, ns, "p"), []events.Endpoint{collectortest.EP("ok.example.org", "A", "192.0.2.9")})
	collectortest.ExpectEvents(t, ns, "Pod", "p", `ttl "abc"`, `target "10.0.0.999"`, `bad_label-.example.org`)
	if got := collectortest.InvalidInput(t, "pod", "InvalidAnnotation") - before; got < 3 {
		t.Errorf("invalid input metric grew by %v, want >= 3", got)
	}
}

// A Node's address change republishes exactly the Pods on it that publish
// the Node's addresses; a Pod change the source does not read (a status
// condition, a foreign annotation) publishes nothing.
func TestPodIncremental(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	node := collectortest.CreateNode(t, ns, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-n"}}, collectortest.ExternalIP("203.0.113.1"))
	collectortest.StartCollector(t, podConfig(ns))
	createTestPod(t, ns, testPod{name: "host", hostNetwork: true, ips: []string{"10.1.0.1"}, annotations: collectortest.Ann("hostname", "host.example.org")})
	createTestPod(t, ns, testPod{name: "internal", hostNetwork: true, ips: []string{"10.1.0.1"}, annotations: collectortest.Ann("internal-hostname", "internal.example.org")})
	createTestPod(t, ns, testPod{name: "target", hostNetwork: true, ips: []string{"10.1.0.1"},
		annotations: collectortest.Ann("hostname", "target.example.org", "target", "198.51.100.1")})
	collectortest.WaitState(t, podSubject(ns, ns, "host"), []events.Endpoint{collectortest.EP("host.example.org", "A", "203.0.113.1")})
	collectortest.WaitState(t, podSubject(ns, ns, "internal"), []events.Endpoint{collectortest.EP("internal.example.org", "A", "10.1.0.1")})
	collectortest.WaitState(t, podSubject(ns, ns, "target"), []events.Endpoint{collectortest.EP("target.example.org", "A", "198.51.100.1")})
	// Barrier: one Pod event, processed after everything before it (one
	// worker). A new Pod would not do: its create and status update may be
	// computed twice, the second time unchanged (skipped) - as the Pods
	// above may have been, which is why the counts start after one.
	barrier := func(ip string) {
		t.Helper()
		target, err := collectortest.Cluster.Client.CoreV1().Pods(ns).Get(t.Context(), "target", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		target.Annotations[collectortest.Alpha+"target"] = ip
		if _, err = collectortest.Cluster.Client.CoreV1().Pods(ns).Update(t.Context(), target, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		collectortest.WaitState(t, podSubject(ns, ns, "target"), []events.Endpoint{collectortest.EP("target.example.org", "A", ip)})
	}
	barrier("198.51.100.2")
	before := map[string]uint64{}
	for _, p := range []string{"host", "internal", "target"} {
		before[p] = collectortest.Count(t, podSubject(ns, ns, p))
	}
	skipped := collectortest.PublishSkipped(t, "pod")

	// Not read by the source.
	p, err := collectortest.Cluster.Client.CoreV1().Pods(ns).Get(t.Context(), "internal", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if p, err = collectortest.Cluster.Client.CoreV1().Pods(ns).UpdateStatus(t.Context(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p.Annotations["example.com/restartedAt"] = "now"
	if _, err = collectortest.Cluster.Client.CoreV1().Pods(ns).Update(t.Context(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	collectortest.SetNodeAddresses(t, node, collectortest.ExternalIP("203.0.113.2"))
	collectortest.WaitState(t, podSubject(ns, ns, "host"), []events.Endpoint{collectortest.EP("host.example.org", "A", "203.0.113.2")})
	barrier("198.51.100.3")
	for name, b := range before {
		want := b
		if name == "host" || name == "target" {
			want++
		}
		if got := collectortest.Count(t, podSubject(ns, ns, name)); got != want {
			t.Errorf("%s: %d messages, want %d", name, got, want)
		}
	}
	// Nothing unaffected was even recomputed (a recomputation without
	// change counts as skipped).
	if got := collectortest.PublishSkipped(t, "pod") - skipped; got != 0 {
		t.Errorf("%v unaffected Pods recomputed", got)
	}
}
