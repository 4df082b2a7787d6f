package systemtest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/zonestream/zonestream/testenv/walkthrough"

	"github.com/miekg/dns"
	"github.com/nats-io/nats.go"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// pipeline is the four stages as separate processes on one bus.
type pipeline struct {
	stages []*process
}

func startPipeline(t *testing.T, natsURL string, cluster *kube.Cluster, ns *bind.Server, zone string) *pipeline {
	return startStages(t, natsURL, cluster, "burst", rfc2136Flags(ns, zone, "burst"), "--interval=5s")
}

// planTap records, from a plain NATS subscription, every plan published:
// work-queue streams admit one consumer, but every publish is also an
// ordinary NATS message.
type planTap struct {
	mu      sync.Mutex
	plans   int
	deletes []string // records (not registry TXT) a plan deleted
	creates []string // records (not registry TXT) a plan created
}

func tapPlans(t *testing.T, url string) *planTap {
	nc, _ := natsenv.Connect(t, url)
	tap := &planTap{}
	subscribePlans(t, nc, func(p *events.Plan) {
		tap.mu.Lock()
		defer tap.mu.Unlock()
		tap.plans++
		for _, c := range p.Changes {
			switch {
			case c.New == nil && c.Old.RecordType != events.RecordTypeTXT:
				tap.deletes = append(tap.deletes, c.Old.DNSName+" "+c.Old.RecordType)
			case c.Old == nil && c.New.RecordType != events.RecordTypeTXT:
				tap.creates = append(tap.creates, c.New.DNSName+" "+c.New.RecordType)
			}
		}
	})
	return tap
}

// subscribePlans calls see with every plan published on nc's server, as it
// arrives; an undecodable plan fails the test.
func subscribePlans(t testing.TB, nc *nats.Conn, see func(*events.Plan)) *nats.Subscription {
	t.Helper()
	sub, err := nc.Subscribe(events.SubjectPlans+".>", func(m *nats.Msg) {
		var p events.Plan
		if err := events.Unmarshal(m.Header, m.Data, &p); err != nil {
			t.Errorf("undecodable plan: %v", err)
			return
		}
		see(&p)
	})
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func (tap *planTap) count() int { tap.mu.Lock(); defer tap.mu.Unlock(); return tap.plans }

func burstIP(i int) string { return fmt.Sprintf("10.1.%d.%d", i/250, i%250+1) }

func createServices(ctx context.Context, kc kubernetes.Interface, zone string, from, to int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := from; i < to; i++ {
		g.Go(func() error {
			name := "svc-" + strconv.Itoa(i)
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{
					"external-dns.alpha.kubernetes.io/hostname": name + "." + zone}},
				// No node port: the apiserver's range holds 2768, and a
				// burst may create more Services than that.
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}},
					AllocateLoadBalancerNodePorts: new(false)},
			}
			created, err := kc.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			created.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: burstIP(i)}}
			_, err = kc.CoreV1().Services("default").UpdateStatus(ctx, created, metav1.UpdateOptions{})
			return err
		})
	}
	return g.Wait()
}

func burstZone(zone, owner string, n int) []string {
	want := []string{"@ NS ns." + zone, "ns A 127.0.0.1", "legacy A 192.0.2.99"}
	for i := range n {
		name := "svc-" + strconv.Itoa(i)
		want = append(want, name+" A "+burstIP(i),
			"a-"+name+" TXT heritage=external-dns,external-dns/owner="+owner+",external-dns/resource=service/default/"+name)
	}
	return sorted(want)
}

// waitZone waits until BIND holds exactly want, and says how long it took.
func waitZone(t testing.TB, ns *bind.Server, zone string, want []string, limit time.Duration) time.Duration {
	t.Helper()
	took, got, ok, err := awaitZone(ns, zone, want, limit)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		return took
	}
	missing, extra := diff(want, got)
	t.Fatalf("after %s BIND still differs: %d missing (e.g. %v), %d unexpected (e.g. %v)",
		limit, len(missing), head(missing), len(extra), head(extra))
	return 0
}

// awaitZone waits until BIND holds exactly want, sorted (ok), and says
// how long that took; past limit it returns what BIND held last. A failed
// transfer ends the wait.
//
// It polls the zone's SOA serial, and transfers the zone only once the
// serial has stood still for a poll and was not transferred before, and
// twice as long as the last transfer took has passed since it: at 100k
// names one transfer costs the machine about a second of CPU, and
// transferring on every poll took a core from the pipeline being measured.
// took runs until the matching serial was first seen.
func awaitZone(ns *bind.Server, zone string, want []string, limit time.Duration) (took time.Duration, last []string, ok bool, err error) {
	const poll = 100 * time.Millisecond
	start := time.Now()
	var serial, transferred uint32
	var seen time.Time // when serial was first seen
	var nextTransfer time.Time
	for {
		s, qerr := zoneSerial(ns, zone)
		switch {
		case time.Since(start) >= limit:
			if last, err = transferZone(ns, zone); err != nil {
				return time.Since(start), nil, false, err
			}
			return time.Since(start), last, slices.Equal(last, want), nil
		case qerr != nil:
			// A lost UDP answer on a busy machine: ask again.
		case seen.IsZero() || s != serial:
			serial, seen = s, time.Now()
		case (last == nil || s != transferred) && !time.Now().Before(nextTransfer):
			began := time.Now()
			if last, err = transferZone(ns, zone); err != nil {
				return time.Since(start), nil, false, err
			}
			transferred, nextTransfer = s, time.Now().Add(2*time.Since(began))
			if slices.Equal(last, want) {
				return seen.Sub(start), last, true, nil
			}
		}
		time.Sleep(poll)
	}
}

// zoneSerial is the serial of zone's SOA as ns answers it.
func zoneSerial(ns *bind.Server, zone string) (uint32, error) {
	rrs, err := ns.Query(zone, dns.TypeSOA)
	if err != nil {
		return 0, err
	}
	for _, rr := range rrs {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa.Serial, nil
		}
	}
	return 0, fmt.Errorf("no SOA for %s in %v", zone, rrs)
}

func diff(want, got []string) (missing, extra []string) {
	for _, w := range want {
		if _, ok := slices.BinarySearch(got, w); !ok {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if _, ok := slices.BinarySearch(want, g); !ok {
			extra = append(extra, g)
		}
	}
	return missing, extra
}

func head(s []string) []string { return s[:min(len(s), 3)] }

// TestKillRestartDuringBurst creates 500 Services while killing (SIGKILL)
// and restarting each stage in turn. BIND must end exactly as the Services
// ask, and no plan may ever delete a record that is wanted.
func TestKillRestartDuringBurst(t *testing.T) {
	const zone, n, batches = "burst.test", 500, 5
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	if err := walkthrough.Plant(ns, zone, "legacy."+zone+". 300 IN A 192.0.2.99"); err != nil {
		t.Fatal(err)
	}
	bus := natsenv.StartT(t)
	tap := tapPlans(t, bus.ClientURL())
	p := startPipeline(t, bus.ClientURL(), cluster, ns, zone)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	for b := range batches {
		if err := createServices(ctx, cluster.Client, zone, b*n/batches, (b+1)*n/batches); err != nil {
			t.Fatal(err)
		}
		victim := p.stages[b%len(p.stages)]
		victim.kill()
		time.Sleep(300 * time.Millisecond)
		victim.start()
		t.Logf("batch %d created; %s killed and restarted", b, victim.name)
	}
	took := waitZone(t, ns, zone, burstZone(zone, "burst", n), 2*time.Minute)
	t.Logf("%d Services converged %s after the last was created (%s from the first)", n, took, time.Since(start))

	tap.mu.Lock()
	deletes := slices.Clone(tap.deletes)
	tap.mu.Unlock()
	if len(deletes) > 0 {
		t.Fatalf("plans deleted %d wanted records, e.g. %v", len(deletes), head(deletes))
	}

	// Quiet when nothing changes: a full re-listing (--interval=5s) and
	// idle stages publish no plan.
	before := tap.count()
	time.Sleep(6 * time.Second)
	if after := tap.count(); after != before {
		t.Fatalf("%d plans published while nothing changed", after-before)
	}
}
