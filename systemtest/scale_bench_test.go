package systemtest

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/loopback"
)

// endpointsPerObject is how many endpoints each DNSEndpoint of
// BenchmarkScale holds.
const endpointsPerObject = 100

// scaleSettle is how long the all-in-one is left alone before the one
// change and before first-start writes are counted: the status it writes
// back on every object (Events, Ready conditions) is not the change.
const scaleSettle = 30 * time.Second

// BenchmarkScale is the cost table's "at scale" goal: N names (default 100000,
// $ZS_SCALE_NAMES for a quicker try or the 1,000,000 of issue 25's
// moonshot), a fifth of them Services (at most maxScaleServices) and the
// rest DNSEndpoints of 100 endpoints each, on a real kube-apiserver and
// BIND, with the all-in-one binary (--source=service --source=crd).
//
//   - converge-s: every object is in place before the binary starts; from
//     its start until an AXFR of BIND holds exactly every record (and
//     ownership TXT). The figure includes the binary's start and the last
//     transfer (about a second at 100k names).
//   - rss-MiB, peak-rss-MiB: the binary's resident memory scaleSettle
//     after it converged, and the most it held until then (VmHWM).
//   - one-change-ms: with all N names in place and settled, one change (a
//     Service's load balancer address, a DNSEndpoint's target, in turn),
//     from the API update to BIND answering it to a DNS query; the median
//     of scaleChanges, their max beside it.
//   - first-start-writes: the binary is killed and a fresh one (new data
//     dir: nothing on the bus) started on the converged zone; RRset changes
//     its applier applied (zonestream_applier_changes_total, outcome
//     applied) from its start until scaleSettle after dedup has all N names
//     and the desired state is complete. The planner's planned changes and
//     the SOA serial's move beside it say the same from two other sides.
func BenchmarkScale(b *testing.B) {
	n := scaleNames(b)
	b.Run(fmt.Sprintf("names=%d", n), func(b *testing.B) {
		for range b.N {
			benchScale(b, n)
		}
	})
}

// scaleChanges is how many single changes one-change-ms is the median of.
const scaleChanges = 6

// maxScaleServices caps the Services of BenchmarkScale: the test
// cluster's Service range (a /16) and burstIP's addresses hold about 62,000.
const maxScaleServices = 50000

// scaleLimit is how long a step of BenchmarkScale may take at n names:
// base per 100,000.
func scaleLimit(n int, base time.Duration) time.Duration {
	return base * time.Duration(max(1, n/100000))
}

func scaleNames(b *testing.B) int {
	n, err := strconv.Atoi(cmp.Or(os.Getenv("ZS_SCALE_NAMES"), "100000"))
	if err != nil || n < 5*endpointsPerObject {
		b.Fatalf("ZS_SCALE_NAMES: %q is not a number of names (at least %d)", os.Getenv("ZS_SCALE_NAMES"), 5*endpointsPerObject)
	}
	return n
}

func benchScale(b *testing.B, n int) {
	b.StopTimer()
	const zone = "scale.test"
	ctx := context.Background()
	services := min(n/5, maxScaleServices)
	cluster := kube.StartT(b, "../deploy/crds")
	ns := bind.StartT(b, zone)
	dyn, err := dynamic.NewForConfig(cluster.Config)
	if err != nil {
		b.Fatal(err)
	}
	created := time.Now()
	if err := createServices(ctx, cluster.Client, zone, 0, services); err != nil {
		b.Fatal(err)
	}
	if err := createEndpoints(ctx, dyn, zone, n-services); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d Services and %d endpoints in DNSEndpoints created in %s", services, n-services, time.Since(created).Round(time.Second))
	want := scaleZone(zone, services, n-services)

	b.StartTimer()
	p, ops, busURL := startScaleProcess(b, cluster, ns, zone)
	sizeStateStreams(b, busURL, n)
	profiled := profileConvergence(b, ops)
	took := waitZone(b, ns, zone, want, scaleLimit(n, 20*time.Minute))
	b.StopTimer()
	<-profiled
	b.ReportMetric(took.Seconds(), "converge-s")

	time.Sleep(scaleSettle)
	b.ReportMetric(statusMiB(b, p.cmd.Process.Pid, "VmRSS"), "rss-MiB")
	b.ReportMetric(statusMiB(b, p.cmd.Process.Pid, "VmHWM"), "peak-rss-MiB")
	changes := oneChanges(b, cluster, dyn, ns, busURL, zone, n-services)
	slices.Sort(changes)
	b.ReportMetric(float64(changes[len(changes)/2].Microseconds())/1000, "one-change-ms")
	b.ReportMetric(float64(changes[len(changes)-1].Microseconds())/1000, "one-change-max-ms")

	// The changes are BIND's now: the fresh start must leave them as they are.
	time.Sleep(scaleSettle)
	serial := soaSerial(b, ns, zone)
	p.kill()
	start := time.Now()
	_, ops, busURL = startScaleProcess(b, cluster, ns, zone)
	sizeStateStreams(b, busURL, n)
	waitDesiredComplete(b, ops, n, scaleLimit(n, 15*time.Minute))
	b.ReportMetric(time.Since(start).Seconds(), "first-start-complete-s")
	time.Sleep(scaleSettle)
	b.ReportMetric(metricSum(b, ops, "zonestream_applier_changes_total", `outcome="applied"`), "first-start-writes")
	b.ReportMetric(metricSum(b, ops, "zonestream_planner_changes_planned_total", ""), "first-start-planned")
	b.ReportMetric(float64(soaSerial(b, ns, zone)-serial), "first-start-serial-moves")
}

// profileConvergence saves a CPU profile of the all-in-one's first
// minute after its start when $ZS_IDLE_PROFILE_DIR is set; the channel
// closes once it is saved (at once when not set).
func profileConvergence(b *testing.B, ops string) <-chan struct{} {
	done := make(chan struct{})
	if os.Getenv("ZS_IDLE_PROFILE_DIR") == "" {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		for range 100 { // the ops listener comes up with the process
			if resp, err := http.Get("http://" + ops + "/metrics"); err == nil {
				resp.Body.Close()
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		<-profileCPU(b, ops, "converge", time.Minute)
	}()
	return done
}

// startScaleProcess starts the all-in-one on both sources with a fresh data
// dir, and returns it, its metrics address and its bus' URL. With
// $ZS_SCALE_GOMEMLIMIT set, the all-in-one (and only it) runs with it as
// GOMEMLIMIT, as an operator sets it below the memory a pod may use.
func startScaleProcess(b *testing.B, cluster *kube.Cluster, ns *bind.Server, zone string) (*process, string, string) {
	ops, bus := loopback.Addr(b), loopback.Addr(b)
	args := append([]string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service", "--source=crd",
		"--nats-listen=" + bus, "--data-dir=" + b.TempDir(), "--metrics-address=" + ops,
		"--portal-listen=" + loopback.Addr(b), "--pprof", "--log-level=warn"},
		rfc2136Flags(ns, zone, "bench")...)
	var env []string // the test's
	if limit := os.Getenv("ZS_SCALE_GOMEMLIMIT"); limit != "" {
		env = append(os.Environ(), "GOMEMLIMIT="+limit)
	}
	return startWithEnv(b, "zonestream", binary, env, args...), ops, "nats://" + bus
}

// namesPerBound is how many names the state streams' default bounds
// hold with room to spare (README: Limits, some 680,000 keys).
const namesPerBound = 400000

// sizeStateStreams raises the state streams' bounds for n names as an
// operator would past what the defaults hold (nats stream edit; the binary
// keeps an operator's bounds), as soon as the binary has made them.
func sizeStateStreams(b *testing.B, busURL string, n int) {
	factor := int64(n/namesPerBound + 1)
	if factor == 1 {
		return
	}
	js, done := connectBus(b, busURL, nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1))
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, name := range []string{events.StreamSources, events.StreamDesired, events.StreamObserved} {
		var st jetstream.Stream
		for st == nil {
			var err error
			if st, err = js.Stream(ctx, name); err != nil && ctx.Err() != nil {
				b.Fatalf("stream %s: %v", name, err)
			}
			if st == nil {
				time.Sleep(20 * time.Millisecond)
			}
		}
		cfg := st.CachedInfo().Config
		cfg.MaxBytes *= factor
		cfg.MaxMsgs *= factor
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			b.Fatalf("raising %s's bounds: %v", name, err)
		}
	}
	b.Logf("state streams' bounds raised %d times for %d names", factor, n)
}

// endpointName and endpointIP are the k-th endpoint of createEndpoints:
// object k/endpointsPerObject, its (k%endpointsPerObject)-th endpoint.
func endpointName(k int) string {
	return fmt.Sprintf("ep-%d-%d", k/endpointsPerObject, k%endpointsPerObject)
}
func endpointIP(k int) string { return fmt.Sprintf("10.2.%d.%d", k/250%250, k%250+1) }

// createEndpoints creates DNSEndpoints in default holding n A endpoints
// in all, endpointsPerObject each (the last one fewer).
func createEndpoints(ctx context.Context, dyn dynamic.Interface, zone string, n int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for first := 0; first < n; first += endpointsPerObject {
		g.Go(func() error {
			var eps []any
			for k := first; k < min(first+endpointsPerObject, n); k++ {
				eps = append(eps, map[string]any{"dnsName": endpointName(k) + "." + zone, "recordType": "A", "targets": []any{endpointIP(k)}})
			}
			u := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "externaldns.k8s.io/v1alpha1", "kind": "DNSEndpoint",
				"metadata": map[string]any{"name": fmt.Sprintf("ep-%d", first/endpointsPerObject), "namespace": "default"},
				"spec":     map[string]any{"endpoints": eps},
			}}
			_, err := dyn.Resource(dnsEndpoints).Namespace("default").Create(ctx, u, metav1.CreateOptions{})
			return err
		})
	}
	return g.Wait()
}

// scaleZone is the zone BIND must hold: createServices' first services
// Services and createEndpoints' endpoints, each with its ownership TXT.
func scaleZone(zone string, services, endpoints int) []string {
	want := slices.DeleteFunc(burstZone(zone, "bench", services), func(s string) bool { return s == "legacy A 192.0.2.99" })
	for k := range endpoints {
		name := endpointName(k)
		want = append(want, name+" A "+endpointIP(k),
			"a-"+name+" TXT heritage=external-dns,external-dns/owner=bench,external-dns/resource=crd/default/ep-"+strconv.Itoa(k/endpointsPerObject))
	}
	return sorted(want)
}

// oneChanges makes scaleChanges single changes, a Service's address and a
// DNSEndpoint's target in turn, each once BIND answered the last, and
// says how long each took to answer.
func oneChanges(b *testing.B, cluster *kube.Cluster, dyn dynamic.Interface, ns *bind.Server, busURL, zone string, endpoints int) []time.Duration {
	ctx := context.Background()
	var took []time.Duration
	var stages []string
	for i := range scaleChanges {
		ip := fmt.Sprintf("192.0.2.%d", i+1)
		name := "svc-" + strconv.Itoa(i)
		var sent time.Time
		var err error
		object := events.SourceSubject(collector.DefaultClusterName, "service", "default", name)
		if i%2 == 0 {
			sent, err = setServiceIP(ctx, cluster.Client, name, ip)
		} else {
			k := (i * endpoints / scaleChanges) / endpointsPerObject * endpointsPerObject // first endpoint of an object
			name = endpointName(k)
			object = events.SourceSubject(collector.DefaultClusterName, "crd", "default", fmt.Sprintf("ep-%d", k/endpointsPerObject))
			sent, err = setEndpointTarget(ctx, dyn, k, ip)
		}
		if err != nil {
			b.Fatal(err)
		}
		// A change that finds the applier listing the zone waits for the
		// listing: over a minute at a million names. The bound grows with
		// the names, so that such a change is measured, not a failure.
		took = append(took, awaitAnswer(b, ns, name+"."+zone, ip, sent, scaleLimit(endpoints, 30*time.Second)))
		stages = append(stages, stagesOf(b, busURL, object, name+"."+zone, zone, sent))
	}
	b.Logf("one change to BIND, in turn Service and DNSEndpoint: %v", took)
	b.Logf("when each stage stored its event, from the API update: %s", strings.Join(stages, "; "))
	return took
}

// setEndpointTarget sets the target of createEndpoints' k-th endpoint to
// ip, and says when the update was sent.
func setEndpointTarget(ctx context.Context, dyn dynamic.Interface, k int, ip string) (time.Time, error) {
	res := dyn.Resource(dnsEndpoints).Namespace("default")
	u, err := res.Get(ctx, fmt.Sprintf("ep-%d", k/endpointsPerObject), metav1.GetOptions{})
	if err != nil {
		return time.Time{}, err
	}
	eps, _, err := unstructured.NestedSlice(u.Object, "spec", "endpoints")
	if err != nil {
		return time.Time{}, err
	}
	eps[k%endpointsPerObject].(map[string]any)["targets"] = []any{ip}
	if err := unstructured.SetNestedSlice(u.Object, eps, "spec", "endpoints"); err != nil {
		return time.Time{}, err
	}
	sent := time.Now()
	_, err = res.Update(ctx, u, metav1.UpdateOptions{})
	return sent, err
}

// connectBus connects to the bus at url with opts; done closes the
// connection.
func connectBus(b *testing.B, url string, opts ...nats.Option) (js jetstream.JetStream, done func()) {
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		b.Fatal(err)
	}
	if js, err = jetstream.New(nc); err != nil {
		nc.Close()
		b.Fatal(err)
	}
	return js, nc.Close
}

// stagesOf says when the bus stored each stage's last event of one change
// (the object's source state, the name's desired and observed states, the
// zone's plan result), counted from sent: where one change's time goes.
func stagesOf(b *testing.B, busURL, object, name, zone string, sent time.Time) string {
	b.Helper()
	ctx := context.Background()
	js, done := connectBus(b, busURL)
	defer done()
	var out []string
	for _, st := range []struct{ what, stream, subject string }{
		{"source", events.StreamSources, object},
		{"desired", events.StreamDesired, events.DesiredSubject(name)},
		{"observed", events.StreamObserved, events.ObservedSubject("rfc2136", name)},
		{"result", events.StreamResults, events.ResultSubject("rfc2136", zone)},
	} {
		s, err := js.Stream(ctx, st.stream)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, st.what+" "+storedAfter(ctx, s, st.subject, sent))
	}
	return strings.Join(out, ", ")
}

// storedAfter says how long after sent subject's last message was stored,
// waiting up to a few seconds for one stored after sent: the applier
// stores a name's observed state after the plan's result, in the
// background, so it may not be there yet when BIND answers.
func storedAfter(ctx context.Context, s jetstream.Stream, subject string, sent time.Time) string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, err := s.GetLastMsgForSubject(ctx, subject)
		switch {
		case err == nil && m.Time.After(sent):
			return m.Time.Sub(sent).Round(100 * time.Microsecond).String()
		case time.Now().After(deadline) && err != nil:
			return err.Error()
		case time.Now().After(deadline):
			return "none stored within 5s"
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func soaSerial(b *testing.B, ns *bind.Server, zone string) int64 {
	b.Helper()
	s, err := zoneSerial(ns, zone)
	if err != nil {
		b.Fatalf("SOA of %s: %v", zone, err)
	}
	return int64(s)
}

// waitDesiredComplete waits until the all-in-one at ops has n names in
// dedup and says the desired state is complete: from then on its planner
// may plan anything, deletes included.
func waitDesiredComplete(b *testing.B, ops string, n int, limit time.Duration) {
	b.Helper()
	waitUntil(b, "desired state of every name complete", limit, func() error {
		names := metricSum(b, ops, "zonestream_dedup_names", "")
		complete := metricSum(b, ops, "zonestream_dedup_complete", "")
		if int(names) != n || complete != 1 {
			return fmt.Errorf("dedup has %v names of %d, complete %v", names, n, complete)
		}
		return nil
	})
}

// metricSum is the sum of the samples of metric (every label set holding
// labels, a substring; "" for all) that ops' /metrics serves; 0 when none.
func metricSum(b *testing.B, ops, metric, labels string) float64 {
	b.Helper()
	resp, err := http.Get("http://" + ops + "/metrics")
	if err != nil {
		// Not serving yet: nothing counted yet either.
		return 0
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, metric)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') || !strings.Contains(rest, labels) {
			continue
		}
		v, err := strconv.ParseFloat(rest[strings.LastIndexByte(rest, ' ')+1:], 64)
		if err != nil {
			b.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return sum
}
