package service_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// There is no controller-manager: the tests create the EndpointSlices,
// Pods (status set with UpdateStatus, as a kubelet would) and Nodes
// themselves.

// nodeSpec is a Node to create; its name is prefixed with the namespace of
// the case, since Nodes are cluster-scoped and shared by the package.
type nodeSpec struct {
	name          string
	addrs         []corev1.NodeAddress
	unschedulable bool
}

// podSpec is a Pod to create and, unless noEndpoint, an endpoint of the
// Service's EndpointSlice (IPv4 or IPv6 slice by its ip) referring to it.
type podSpec struct {
	name        string
	labels      map[string]string // default app=web
	annotations map[string]string
	hostname    string
	node        string // nodeSpec name, without the namespace prefix
	phase       corev1.PodPhase
	ip          string
	hostIP      string
	notReady    bool
	noEndpoint  bool
}

func boolp(b bool) *bool { return &b }

var webLabels = map[string]string{"app": "web"}

func nodeName(ns, n string) string {
	if n == "" {
		return ""
	}
	return ns + "-" + n
}

// createNode creates a Node with its status addresses and deletes it when
// the test ends.
func createNode(t *testing.T, ns string, n nodeSpec) *corev1.Node {
	t.Helper()
	name := nodeName(ns, n.name)
	node, err := collectortest.Cluster.Client.CoreV1().Nodes().Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.NodeSpec{Unschedulable: n.unschedulable}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := collectortest.Cluster.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete node %s: %v", name, err)
		}
	})
	return collectortest.SetNodeAddresses(t, node, n.addrs...)
}

// createPod creates a Pod bound to its node and sets its status.
func createPod(t *testing.T, ns string, p podSpec) *corev1.Pod {
	t.Helper()
	l := p.labels
	if l == nil {
		l = webLabels
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: ns, Labels: l, Annotations: p.annotations},
		Spec: corev1.PodSpec{
			Hostname: p.hostname, NodeName: nodeName(ns, p.node),
			Containers: []corev1.Container{{Name: "c", Image: "registry.invalid/none"}},
		},
	}
	got, err := collectortest.Cluster.Client.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	phase := p.phase
	if phase == "" {
		phase = corev1.PodRunning
	}
	got.Status.Phase = phase
	if phase == corev1.PodRunning {
		// As a kubelet says it: Ready unless the case says otherwise.
		ready := corev1.ConditionTrue
		if p.notReady {
			ready = corev1.ConditionFalse
		}
		got.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}
	}
	if p.ip != "" {
		got.Status.PodIP = p.ip
		got.Status.PodIPs = []corev1.PodIP{{IP: p.ip}}
	}
	if p.hostIP != "" {
		got.Status.HostIP = p.hostIP
		got.Status.HostIPs = []corev1.HostIP{{IP: p.hostIP}}
	}
	if got, err = collectortest.Cluster.Client.CoreV1().Pods(ns).UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	return got
}

// endpointsOf are the EndpointSlices of Service svcName for pods: one per
// address family, as the EndpointSlice controller makes them.
func endpointsOf(ns, svcName string, pods []podSpec, extra ...discoveryv1.Endpoint) []*discoveryv1.EndpointSlice {
	byType := map[discoveryv1.AddressType][]discoveryv1.Endpoint{}
	for _, p := range pods {
		if p.noEndpoint || p.ip == "" {
			continue
		}
		at := discoveryv1.AddressTypeIPv4
		if a := netip.MustParseAddr(p.ip); a.Is6() {
			at = discoveryv1.AddressTypeIPv6
		}
		byType[at] = append(byType[at], discoveryv1.Endpoint{
			Addresses:  []string{p.ip},
			Conditions: discoveryv1.EndpointConditions{Ready: boolp(!p.notReady)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: p.name},
		})
	}
	byType[discoveryv1.AddressTypeIPv4] = append(byType[discoveryv1.AddressTypeIPv4], extra...)
	var out []*discoveryv1.EndpointSlice
	for _, at := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6} {
		if len(byType[at]) == 0 {
			continue
		}
		out = append(out, &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{
				Name: fmt.Sprintf("%s-%s", svcName, strings.ToLower(string(at))), Namespace: ns,
				Labels: map[string]string{discoveryv1.LabelServiceName: svcName, discoveryv1.LabelManagedBy: "zonestream-test"},
			},
			AddressType: at,
			Endpoints:   byType[at],
		})
	}
	return out
}

func createSlices(t *testing.T, slices ...*discoveryv1.EndpointSlice) []*discoveryv1.EndpointSlice {
	t.Helper()
	var out []*discoveryv1.EndpointSlice
	for _, es := range slices {
		got, err := collectortest.Cluster.Client.DiscoveryV1().EndpointSlices(es.Namespace).Create(t.Context(), es, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
	}
	return out
}

// depCase is one case of a rule that reads Pods, EndpointSlices or Nodes.
type depCase struct {
	name  string
	cfg   func(*collector.Config)
	nodes []nodeSpec
	pods  []podSpec
	// extra endpoints of the Service's IPv4 slice (not from pods).
	extra []discoveryv1.Endpoint
	svc   *corev1.Service
	// want computes the expected endpoints from the created Service (for
	// its node ports) and namespace; nil: nothing is published.
	want func(svc *corev1.Service) []events.Endpoint
}

// runDepRules creates every object of a case, then starts a collector:
// once it is ready its first pass has computed the Service from synced
// caches, so "nothing published" needs no barrier.
func runDepRules(t *testing.T, cases []depCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := collectortest.NewNamespace(t)
			for _, n := range tc.nodes {
				createNode(t, ns, n)
			}
			for _, p := range tc.pods {
				createPod(t, ns, p)
			}
			created := collectortest.CreateService(t, ns, tc.svc)
			createSlices(t, endpointsOf(ns, tc.svc.Name, tc.pods, tc.extra...)...)
			collectortest.StartAndExpect(t, collector.Config{ClusterName: ns, Namespace: ns}, tc.cfg, collectortest.ServiceSubject(ns, ns, tc.svc.Name), tc.want, created)
		})
	}
}

func headless(name string, annotations map[string]string) *corev1.Service {
	return withSpec(collectortest.Service(name, cipT, annotations), func(s *corev1.ServiceSpec) {
		s.ClusterIP = corev1.ClusterIPNone
		s.Selector = webLabels
	})
}

func nodePort(name string, annotations map[string]string) *corev1.Service {
	return withSpec(collectortest.Service(name, npT, annotations), func(s *corev1.ServiceSpec) { s.Selector = webLabels })
}
