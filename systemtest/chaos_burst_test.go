package systemtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// A chaos burst is a list of changes to volatile Services, drawn in
// advance from the trial's seed so that a trial can be replayed: creates,
// address changes and deletes, every change of one Service in order.

type chaosOpKind int

const (
	opCreate chaosOpKind = iota
	opUpdate
	opDelete
)

type chaosOp struct {
	kind chaosOpKind
	svc  string
	ip   string // create, update: the address it gets
	lane int    // the worker that runs every change of svc, in order
}

// chaosLanes is how many changes are in flight at once, as in
// createServices.
const chaosLanes = 16

// drawBurst draws n changes over Services named prefix-v<i>: 40% creates,
// 30% address changes, 30% deletes, so that the live set grows slowly
// (about n/10 survive). It returns the changes and the survivors' final
// addresses.
func drawBurst(r *rand.Rand, prefix string, n int) ([]chaosOp, map[string]string) {
	var ops []chaosOp
	live := []string{}
	ip := map[string]string{}
	lane := map[string]int{}
	index, gen := map[string]int{}, map[string]int{}
	created := 0
	for len(ops) < n {
		x := r.IntN(10)
		switch {
		case len(live) == 0 || x < 4:
			svc := fmt.Sprintf("%s-v%d", prefix, created)
			index[svc], lane[svc], ip[svc] = created, created%chaosLanes, volatileIP(created, 0)
			created++
			live = append(live, svc)
			ops = append(ops, chaosOp{kind: opCreate, svc: svc, ip: ip[svc], lane: lane[svc]})
		case x < 7:
			svc := live[r.IntN(len(live))]
			gen[svc]++
			ip[svc] = volatileIP(index[svc], gen[svc])
			ops = append(ops, chaosOp{kind: opUpdate, svc: svc, ip: ip[svc], lane: lane[svc]})
		default:
			j := r.IntN(len(live))
			svc := live[j]
			live[j] = live[len(live)-1]
			live = live[:len(live)-1]
			delete(ip, svc)
			ops = append(ops, chaosOp{kind: opDelete, svc: svc, lane: lane[svc]})
		}
	}
	return ops, ip
}

// volatileIP is the address of the i-th volatile Service after gen changes;
// stable Services have burstIP's 10.1.0.0/16.
func volatileIP(i, gen int) string {
	return fmt.Sprintf("10.%d.%d.%d", 2+gen%200, i/250%256, i%250+1)
}

// runBurst makes the changes against the cluster, one lane per worker, and
// counts them in done as they complete. Each Service's wanted span goes in
// the ledger: open once it is created (with its address), closed just
// before its delete is sent.
func runBurst(ctx context.Context, kc kubernetes.Interface, zone string, ops []chaosOp, ledger *wantedLedger, done *atomic.Int64) error {
	lanes := make([][]chaosOp, chaosLanes)
	for _, op := range ops {
		lanes[op.lane] = append(lanes[op.lane], op)
	}
	g, ctx := errgroup.WithContext(ctx)
	for _, lane := range lanes {
		g.Go(func() error {
			svcs := map[string]*corev1.Service{} // the last version this lane wrote
			for _, op := range lane {
				if err := runOp(ctx, kc, zone, op, svcs, ledger); err != nil {
					return fmt.Errorf("%s %s: %w", []string{"create", "update", "delete"}[op.kind], op.svc, err)
				}
				done.Add(1)
			}
			return nil
		})
	}
	return g.Wait()
}

// Volatile Services are ExternalName Services with spec.externalIPs, which
// the service source publishes as A records, as ExternalDNS does: unlike a
// load balancer they take no cluster IP. Each cluster IP allocated or
// released rewrites the apiserver's 128 KiB allocation bitmap (the test
// cluster's range is a /12), and 10k of them filled etcd's 2 GiB quota
// within two trials.
func runOp(ctx context.Context, kc kubernetes.Interface, zone string, op chaosOp, svcs map[string]*corev1.Service, ledger *wantedLedger) error {
	api := kc.CoreV1().Services("default")
	switch op.kind {
	case opCreate:
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: op.svc, Namespace: "default", Annotations: map[string]string{
				"external-dns.alpha.kubernetes.io/hostname": op.svc + "." + zone}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "backend.example",
				ExternalIPs: []string{op.ip}},
		}
		created, err := api.Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		svcs[op.svc] = created
		ledger.wanted(op.svc, time.Now())
		return nil
	case opUpdate:
		return setIP(ctx, kc, op, svcs)
	default:
		ledger.unwanted(op.svc, time.Now())
		delete(svcs, op.svc)
		return api.Delete(ctx, op.svc, metav1.DeleteOptions{})
	}
}

// setIP changes the Service's address; on a conflict (nobody else writes
// these Services, but the apiserver may bump them) it reads the Service
// again, three times at most.
func setIP(ctx context.Context, kc kubernetes.Interface, op chaosOp, svcs map[string]*corev1.Service) error {
	api := kc.CoreV1().Services("default")
	svc := svcs[op.svc]
	for try := 0; ; try++ {
		svc = svc.DeepCopy()
		svc.Spec.ExternalIPs = []string{op.ip}
		updated, err := api.Update(ctx, svc, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) && try < 3 {
			if svc, err = api.Get(ctx, op.svc, metav1.GetOptions{}); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		svcs[op.svc] = updated
		return nil
	}
}

// volatileZone is what the survivors add to the zone: their A records and
// ownership TXT, as burstZone writes the stable ones.
func volatileZone(owner string, survivors map[string]string) []string {
	var out []string
	for svc, ip := range survivors {
		out = append(out, svc+" A "+ip,
			"a-"+svc+" TXT heritage=external-dns,external-dns/owner="+owner+",external-dns/resource=service/default/"+svc)
	}
	return out
}

// deleteServices deletes the survivors of a trial, closing their spans
// first.
func deleteServices(ctx context.Context, kc kubernetes.Interface, svcs []string, ledger *wantedLedger) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(chaosLanes)
	for _, svc := range slices.Sorted(slices.Values(svcs)) {
		g.Go(func() error {
			ledger.unwanted(svc, time.Now())
			return kc.CoreV1().Services("default").Delete(ctx, svc, metav1.DeleteOptions{})
		})
	}
	return g.Wait()
}
