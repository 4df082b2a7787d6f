package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/stage"
)

// cluster runs `zonestream cluster retire NAME`: it removes a cluster that
// is gone from the bus, so that its records go and it stops holding
// deletes back. Until it is retired, a silent cluster keeps its records.
func cluster(args []string) error {
	if len(args) > 0 && args[0] != "retire" && args[0] != "--" && strings.HasPrefix(args[0], "-") {
		args = append([]string{"retire"}, args...) // cluster --help: cluster retire's
	}
	if len(args) == 0 || args[0] != "retire" {
		return stage.NewUsageError("zonestream cluster: usage: zonestream cluster retire [--force] NAME")
	}
	cmd := newOperatorCommand("cluster retire", "zonestream cluster retire [--force] NAME")
	force := cmd.fs.Bool("force", false, "retire even though a collector of the cluster renewed its mark within its lease (a collector still running publishes everything again)")
	name, ok, err := cmd.parse(args[1:])
	if !ok {
		return err
	}
	nc, js, err := cmd.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sum, err := RetireCluster(ctx, js, name, *force, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stdout, "retired cluster %s: %d objects tombstoned, %d collectors retired, name released\n"+
		"its records are deleted once dedup marks the desired state complete (every other collector synced)\n",
		name, sum.Objects, sum.Collectors)
	return nil
}

// Retired is what RetireCluster did: how many objects it tombstoned and
// how many collectors' marks it retired.
type Retired struct{ Objects, Collectors int }

// RetireCluster tombstones every object of cluster on the sources stream,
// retires its collectors' marks and releases its name. The released name
// retires every collector of the cluster, also those of which the sources
// stream holds nothing any more but dedup's last mark still requires, and
// also for a dedup that was down and reads it back. It refuses while a
// collector of the cluster is live (its mark's lease has not lapsed),
// unless force: a live collector would publish its objects again.
func RetireCluster(ctx context.Context, js jetstream.JetStream, cluster string, force bool, now time.Time) (Retired, error) {
	var (
		mu      sync.Mutex
		done    bool
		objects []events.ObjectRef
		marks   []events.CollectorState
		live    []string
	)
	err := events.ReadLast(ctx, js, events.StreamSources, []string{events.SourceFilter(cluster)}, func(m events.Received) {
		mu.Lock()
		defer mu.Unlock()
		if done {
			return
		}
		if ref, err := events.ParseSourceSubject(m.Subject); err == nil {
			var st events.SourceState
			if events.Decode(m, &st) != nil || !st.IsTombstone() {
				objects = append(objects, ref)
			}
			return
		}
		var cs events.CollectorState
		if events.Decode(m, &cs) != nil || cs.Phase == events.PhaseRetired {
			return
		}
		marks = append(marks, cs)
		if until := m.Time.Add(cs.Lease()); until.After(now) {
			live = append(live, fmt.Sprintf("%s (%s, lease until %s)", cs.Collector, cs.Phase, until.Format(time.RFC3339)))
		}
	})
	mu.Lock()
	done = true
	mu.Unlock()
	if err != nil {
		return Retired{}, err
	}
	if len(live) > 0 && !force {
		slices.Sort(live)
		return Retired{}, fmt.Errorf("cluster %s has live collectors: %s; stop them first, or wait for their leases to lapse (--force retires anyway)",
			cluster, strings.Join(live, ", "))
	}
	for _, ref := range objects {
		if _, _, err := events.Publish(ctx, js, ref.Subject(), &events.SourceState{Object: ref}, ""); err != nil {
			return Retired{}, err
		}
	}
	for i := range marks {
		marks[i].Phase = events.PhaseRetired
		if _, _, err := events.Publish(ctx, js, events.CollectorSubject(cluster, marks[i].Collector), &marks[i], ""); err != nil {
			return Retired{}, err
		}
	}
	claim := &events.ClusterClaim{Cluster: cluster}
	if _, _, err := events.Publish(ctx, js, events.ClaimSubject(cluster), claim, ""); err != nil {
		return Retired{}, err
	}
	return Retired{Objects: len(objects), Collectors: len(marks)}, nil
}
