package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/dedup"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// desiredLog is what dedup publishes on the desired stream, as it comes.
type desiredLog struct {
	mu      sync.Mutex
	marks   []events.DesiredComplete
	desired []events.DesiredState
}

func watchDesired(t *testing.T, js jetstream.JetStream) *desiredLog {
	t.Helper()
	l := &desiredLog{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_, err := events.Watch(ctx, js, events.StreamDesired, []string{events.SubjectDesired + ".>"}, func(m events.Received) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if m.Subject == events.DesiredCompleteSubject() {
			var c events.DesiredComplete
			if err := events.Decode(m, &c); err != nil {
				t.Error(err)
			}
			l.marks = append(l.marks, c)
			return
		}
		var d events.DesiredState
		if err := events.Decode(m, &d); err != nil {
			t.Error(err)
		}
		l.desired = append(l.desired, d)
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// since returns the marks and desired states from the given counts on,
// and the counts now.
func (l *desiredLog) since(marks, desired int) ([]events.DesiredComplete, []events.DesiredState, int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.marks[marks:]), slices.Clone(l.desired[desired:]), len(l.marks), len(l.desired)
}

// runDedup runs dedup in this process, once it has replayed the sources
// stream (so that what follows is live), until the returned stop is called.
func runDedup(t *testing.T, js jetstream.JetStream) (stop func()) {
	t.Helper()
	d, err := dedup.New(dedup.Config{Heartbeat: 100 * time.Millisecond}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx, js) }()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	waitUntil(t, "dedup caught up", 10*time.Second, d.Ready)
	return stop
}

// announceSynced publishes a collector's synced mark, as a collector of
// cluster watching services does at every heartbeat.
func announceSynced(t *testing.T, js jetstream.JetStream, cluster string) {
	t.Helper()
	id := events.CollectorID([]string{"service"}, "")
	mark := &events.CollectorState{CollectorRef: events.CollectorRef{Cluster: cluster, Collector: id, Sources: []string{"service"}},
		Run: "r1", Phase: events.PhaseSynced, LeaseMillis: time.Minute.Milliseconds()}
	if _, _, err := events.Publish(context.Background(), js, events.CollectorSubject(cluster, id), mark, ""); err != nil {
		t.Fatal(err)
	}
}

// TestLostClusterHoldsCompletenessUntilRetired: clusters a and b are
// synced and the desired state complete; the sources stream loses b's
// messages (a purge of its subjects) and dedup restarts before b's next
// heartbeat. Who must be synced survives the stream: a alone saying synced
// makes nothing complete, and b's name is not published as unwanted. Only
// `zonestream cluster retire b` (which finds nothing of b on the sources
// stream) lets the desired state complete without b, and b's name go.
func TestLostClusterHoldsCompletenessUntilRetired(t *testing.T) {
	bus := natsenv.StartT(t)
	_, js := natsenv.Connect(t, bus.ClientURL())
	ctx := context.Background()
	if err := events.EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	for cluster, name := range map[string]string{"a": "www.example.org", "b": "web.example.org"} {
		ref := events.ObjectRef{Cluster: cluster, Source: "service", Namespace: "default", Name: "svc"}
		src := &events.SourceState{Object: ref, Endpoints: []events.Endpoint{events.NewEndpoint(name, "A", 0, "192.0.2.1")}}
		if _, _, err := events.Publish(ctx, js, ref.Subject(), src, ""); err != nil {
			t.Fatal(err)
		}
	}
	log := watchDesired(t, js)
	stop := runDedup(t, js)
	announceSynced(t, js, "a")
	announceSynced(t, js, "b")
	waitUntil(t, "complete with both clusters", 10*time.Second, func() error {
		marks, _, _, _ := log.since(0, 0)
		if n := len(marks); n > 0 && marks[n-1].Complete && slices.Equal(marks[n-1].Clusters, []string{"a", "b"}) {
			return nil
		}
		return errors.New("not yet")
	})
	stop()

	sources, err := js.Stream(ctx, events.StreamSources)
	if err != nil {
		t.Fatal(err)
	}
	if err := sources.Purge(ctx, jetstream.WithPurgeSubject(events.SourceFilter("b"))); err != nil {
		t.Fatal(err)
	}
	_, _, marksAt, desiredAt := log.since(0, 0)
	runDedup(t, js)
	announceSynced(t, js, "a")
	// Several heartbeats: time for dedup to say complete if it would.
	time.Sleep(time.Second)
	marks, desired, _, _ := log.since(marksAt, desiredAt)
	if len(marks) == 0 {
		t.Fatal("the restarted dedup published no mark")
	}
	for _, m := range marks {
		if m.Complete {
			t.Fatalf("complete without cluster b, whose messages the sources stream lost: %+v", m)
		}
	}
	for _, d := range desired {
		if d.DNSName == "web.example.org" {
			t.Fatalf("b's name published as %d endpoints while b has not said synced: %+v", len(d.Endpoints), d)
		}
	}

	sum, err := retireCluster(ctx, js, "b", false, time.Now())
	if err != nil {
		t.Fatalf("retire b: %v", err)
	}
	t.Logf("retired b: %+v", sum)
	waitUntil(t, "complete without b, and b's name gone", 10*time.Second, func() error {
		marks, desired, _, _ := log.since(marksAt, desiredAt)
		if n := len(marks); !marks[n-1].Complete || !slices.Equal(marks[n-1].Clusters, []string{"a"}) {
			return fmt.Errorf("last mark %+v", marks[n-1])
		}
		if i := slices.IndexFunc(desired, func(d events.DesiredState) bool { return d.DNSName == "web.example.org" }); i < 0 ||
			len(desired[i].Endpoints) > 0 {
			return errors.New("web.example.org not published as unwanted")
		}
		return nil
	})
}
