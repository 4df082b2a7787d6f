package service_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// serviceSubjects gives the subjects of the Services of ns.
func serviceSubjects(ns string) func(name string) string {
	return func(name string) string { return collectortest.ServiceSubject(ns, ns, name) }
}

// Changing a Pod's target annotation republishes the headless Service
// selecting it and nothing else: no other Service is even recomputed. A
// change of a Pod the Service source does not read is not even seen.
func TestIncrementalPodTargetAnnotation(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collector.Config{ClusterName: ns, Namespace: ns})
	webPods := []podSpec{{name: "a", ip: "10.0.0.1"}, {name: "b", ip: "10.0.0.2"}}
	otherPods := []podSpec{{name: "o", ip: "10.0.0.3", labels: map[string]string{"app": "other"}}}
	a := createPod(t, ns, webPods[0])
	createPod(t, ns, webPods[1])
	o := createPod(t, ns, otherPods[0])
	collectortest.CreateService(t, ns, headless("web", collectortest.Ann("hostname", webHost)))
	collectortest.CreateService(t, ns, withSpec(headless("other", collectortest.Ann("hostname", "other.example.org")),
		func(s *corev1.ServiceSpec) { s.Selector = map[string]string{"app": "other"} }))
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("lb", "lb.example.org", nil), collectortest.LoadBalancerIP("192.0.2.1"))
	createSlices(t, endpointsOf(ns, "web", webPods)...)
	createSlices(t, endpointsOf(ns, "other", otherPods)...)
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "web"), []events.Endpoint{collectortest.EP(webHost, "A", "10.0.0.1", "10.0.0.2")})
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "other"), []events.Endpoint{collectortest.EP("other.example.org", "A", "10.0.0.3")})
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "lb"), []events.Endpoint{collectortest.EP("lb.example.org", "A", "192.0.2.1")})
	collectortest.Barrier(t, ns, ns)
	before := collectortest.Counts(t, serviceSubjects(ns), "web", "other", "lb")
	skipped := collectortest.PublishSkipped(t, "service")

	a.Annotations = collectortest.Ann("target", "203.0.113.7")
	if _, err := collectortest.Cluster.Client.CoreV1().Pods(ns).Update(t.Context(), a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "web"), []events.Endpoint{collectortest.EP(webHost, "A", "10.0.0.2", "203.0.113.7")})
	// A change the transform drops: no Service is enqueued.
	o.Annotations = map[string]string{"example.com/unrelated": "x"}
	if _, err := collectortest.Cluster.Client.CoreV1().Pods(ns).Update(t.Context(), o, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.Barrier(t, ns, ns)
	collectortest.ExpectCounts(t, serviceSubjects(ns), before, "web")
	if got := collectortest.PublishSkipped(t, "service"); got != skipped {
		t.Errorf("publish_skipped_total went %v -> %v: a Service that did not depend on the change was recomputed", skipped, got)
	}
}

// Changing a Node's addresses republishes the NodePort Services (and the
// headless NodeExternalIP Service with a Pod on it) and nothing else; a
// Node change that leaves its addresses alone is not even seen.
func TestIncrementalNodeAddresses(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collector.Config{ClusterName: ns, Namespace: ns})
	n1 := createNode(t, ns, nodeSpec{name: "n1", addrs: []corev1.NodeAddress{collectortest.ExternalIP("198.51.100.1"), collectortest.InternalIP("10.1.0.1")}})
	createNode(t, ns, nodeSpec{name: "n2", addrs: []corev1.NodeAddress{collectortest.ExternalIP("198.51.100.2"), collectortest.InternalIP("10.1.0.2")}})
	web := []podSpec{{name: "a", node: "n1", ip: "10.0.0.1"}}
	web2 := []podSpec{{name: "b", node: "n2", ip: "10.0.0.2", labels: map[string]string{"app": "web2"}}}
	for _, p := range append(append([]podSpec{{name: "c", node: "n2", ip: "10.0.0.3", labels: map[string]string{"app": "np3"}}}, web...), web2...) {
		createPod(t, ns, p)
	}
	collectortest.CreateService(t, ns, nodePort("np1", collectortest.Ann("hostname", "np1.example.org")))
	collectortest.CreateService(t, ns, nodePort("np2", collectortest.Ann("hostname", "np2.example.org", "access", "private")))
	collectortest.CreateService(t, ns, withSpec(nodePort("np3", collectortest.Ann("hostname", "np3.example.org")), func(s *corev1.ServiceSpec) {
		s.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Selector = map[string]string{"app": "np3"}
	}))
	collectortest.CreateService(t, ns, headless("hl1", collectortest.Ann("hostname", "hl1.example.org", "endpoints-type", "NodeExternalIP")))
	collectortest.CreateService(t, ns, withSpec(headless("hl2", collectortest.Ann("hostname", "hl2.example.org", "endpoints-type", "NodeExternalIP")),
		func(s *corev1.ServiceSpec) { s.Selector = map[string]string{"app": "web2"} }))
	collectortest.CreateService(t, ns, collectortest.LoadBalancerService("lb", "lb.example.org", nil), collectortest.LoadBalancerIP("192.0.2.1"))
	createSlices(t, endpointsOf(ns, "hl1", web)...)
	createSlices(t, endpointsOf(ns, "hl2", web2)...)

	wait := func(name string, want ...events.Endpoint) {
		t.Helper()
		collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, name), want)
	}
	wait("np1", collectortest.EP("np1.example.org", "A", "198.51.100.1", "198.51.100.2"))
	wait("np2", collectortest.EP("np2.example.org", "A", "10.1.0.1", "10.1.0.2"))
	wait("np3", collectortest.EP("np3.example.org", "A", "198.51.100.2"))
	wait("hl1", collectortest.EP("hl1.example.org", "A", "198.51.100.1"))
	wait("hl2", collectortest.EP("hl2.example.org", "A", "198.51.100.2"))
	wait("lb", collectortest.EP("lb.example.org", "A", "192.0.2.1"))
	collectortest.Barrier(t, ns, ns)
	before := collectortest.Counts(t, serviceSubjects(ns), "np1", "np2", "np3", "hl1", "hl2", "lb")
	skipped := collectortest.PublishSkipped(t, "service")

	n1 = collectortest.SetNodeAddresses(t, n1, collectortest.ExternalIP("198.51.100.9"), collectortest.InternalIP("10.1.0.9"))
	wait("np1", collectortest.EP("np1.example.org", "A", "198.51.100.2", "198.51.100.9"))
	wait("np2", collectortest.EP("np2.example.org", "A", "10.1.0.2", "10.1.0.9"))
	wait("hl1", collectortest.EP("hl1.example.org", "A", "198.51.100.9"))
	collectortest.Barrier(t, ns, ns)
	collectortest.ExpectCounts(t, serviceSubjects(ns), before, "np1", "np2", "hl1")

	// Status without an address change (a condition): nothing.
	n1 = n1.DeepCopy()
	n1.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	if _, err := collectortest.Cluster.Client.CoreV1().Nodes().UpdateStatus(t.Context(), n1, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.Barrier(t, ns, ns)
	collectortest.ExpectCounts(t, serviceSubjects(ns), before, "np1", "np2", "hl1")
	if got := collectortest.PublishSkipped(t, "service"); got != skipped {
		t.Errorf("publish_skipped_total went %v -> %v: a Service that did not depend on the change was recomputed", skipped, got)
	}
}

// EndpointSlice changes republish their Service; a Pod becoming Running
// republishes the externalTrafficPolicy-Local NodePort Service selecting it.
func TestIncrementalEndpointSliceAndPodPhase(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collector.Config{ClusterName: ns, Namespace: ns})
	createNode(t, ns, nodeSpec{name: "n1", addrs: []corev1.NodeAddress{collectortest.InternalIP("10.1.0.1")}})
	pods := []podSpec{{name: "a", ip: "10.0.0.1", node: "n1"}, {name: "b", ip: "10.0.0.2", node: "n1", phase: corev1.PodPending}}
	createPod(t, ns, pods[0])
	b := createPod(t, ns, pods[1])
	collectortest.CreateService(t, ns, headless("web", collectortest.Ann("hostname", webHost)))
	collectortest.CreateService(t, ns, withSpec(nodePort("np", collectortest.Ann("hostname", "np.example.org")), func(s *corev1.ServiceSpec) {
		s.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		s.Selector = map[string]string{"app": "np"}
	}))
	es := createSlices(t, endpointsOf(ns, "web", pods[:1])...)[0]
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "web"), []events.Endpoint{collectortest.EP(webHost, "A", "10.0.0.1")})

	es.Endpoints = endpointsOf(ns, "web", pods)[0].Endpoints
	if _, err := collectortest.Cluster.Client.DiscoveryV1().EndpointSlices(ns).Update(t.Context(), es, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "web"), []events.Endpoint{collectortest.EP(webHost, "A", "10.0.0.1", "10.0.0.2")})

	// Pod b joins np (labels) while Pending: nothing; then Running: n1.
	b.Labels = map[string]string{"app": "np"}
	b, err := collectortest.Cluster.Client.CoreV1().Pods(ns).Update(t.Context(), b, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// b left web's selector: its endpoint no longer counts.
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "web"), []events.Endpoint{collectortest.EP(webHost, "A", "10.0.0.1")})
	collectortest.Barrier(t, ns, ns)
	if _, ok := collectortest.LastState(t, collectortest.ServiceSubject(ns, ns, "np")); ok {
		t.Fatal("np published without a running pod")
	}
	b.Status.Phase = corev1.PodRunning
	if _, err := collectortest.Cluster.Client.CoreV1().Pods(ns).UpdateStatus(t.Context(), b, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "np"), []events.Endpoint{collectortest.EP("np.example.org", "A", "10.1.0.1")})

	if err := collectortest.Cluster.Client.DiscoveryV1().EndpointSlices(ns).Delete(t.Context(), es.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if st := collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "web"), nil); !st.IsTombstone() {
		t.Fatalf("not a tombstone: %+v", st)
	}
}

// An invalid target annotation on a Pod: a Warning event on the Pod, the
// metric, and the valid targets still published.
func TestInvalidPodTargetReported(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	collectortest.StartCollector(t, collector.Config{ClusterName: ns, Namespace: ns})
	before := collectortest.InvalidInput(t, "service", "InvalidAnnotation")
	pods := []podSpec{{name: "a", ip: "10.0.0.1", annotations: collectortest.Ann("target", "300.1.1.1,203.0.113.5")}}
	createPod(t, ns, pods[0])
	collectortest.CreateService(t, ns, headless("web", collectortest.Ann("hostname", webHost)))
	createSlices(t, endpointsOf(ns, "web", pods)...)
	collectortest.WaitState(t, collectortest.ServiceSubject(ns, ns, "web"), []events.Endpoint{collectortest.EP(webHost, "A", "203.0.113.5")})
	msgs := collectortest.WaitObjectEvents(t, ns, "Pod", "a", 1)
	if !strings.Contains(msgs, "InvalidAnnotation") || !strings.Contains(msgs, "300.1.1.1") || !strings.Contains(msgs, "web") {
		t.Errorf("event on the Pod: %s", msgs)
	}
	if got := collectortest.InvalidInput(t, "service", "InvalidAnnotation"); got < before+1 {
		t.Errorf("invalid_input_total{InvalidAnnotation} went %v -> %v, want +1", before, got)
	}
}
