package stage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zonestream/zonestream/testenv/natsenv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/leader"
)

// stageStub is a Leased stage that counts its runs and is never ready.
type stageStub struct {
	runs    atomic.Int32
	running atomic.Int32
}

func (s *stageStub) Run(ctx context.Context, _ jetstream.JetStream) error {
	s.runs.Add(1)
	s.running.Add(1)
	defer s.running.Add(-1)
	<-ctx.Done()
	return ctx.Err()
}
func (*stageStub) Ready() error     { return errors.New("still replaying") }
func (*stageStub) LeaseKey() string { return "stub" }

// unleased is a stage without a lease (its LeaseKey shadows the stub's).
type unleased struct{ stageStub }

func (*unleased) LeaseKey() {}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestElectedRunsOneReplicaAndTheStandbyIsReady(t *testing.T) {
	_, js := natsenv.Connect(t, natsenv.StartT(t).ClientURL())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := events.EnsureLeases(ctx, js); err != nil {
		t.Fatal(err)
	}

	election := Election{Enabled: true, Config: leader.Config{Identity: "t", LeaseDuration: 1500 * time.Millisecond,
		RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond}}
	stub := &stageStub{}
	var replicas []Runner
	for i := range 2 {
		replica := election
		replica.Identity = fmt.Sprintf("t-%d", i) // one per live replica
		svc, err := replica.Elected(stub, quiet)
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, svc)
		go func() { _ = svc.Run(ctx, js) }()
	}
	deadline := time.Now().Add(5 * time.Second)
	for stub.runs.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(3 * election.LeaseDuration)
	if runs, running := stub.runs.Load(), stub.running.Load(); runs != 1 || running != 1 {
		t.Fatalf("the stage ran %d times, %d at once now; want once, by one replica", runs, running)
	}
	var ready, standby int
	for _, r := range replicas {
		if r.Ready() == nil {
			standby++
		} else {
			ready++ // the leader reports the stage's own readiness: not yet
		}
	}
	if standby != 1 || ready != 1 {
		t.Fatalf("readiness: %d replicas ready (standby), %d reporting the stage's; want one of each", standby, ready)
	}

	// Off, without a lease or with a timing that cannot keep leaders apart:
	// the stage as it is, or an error.
	if svc, _ := (Election{}).Elected(stub, quiet); svc != Runner(stub) {
		t.Error("--leader-elect=false still wraps the stage")
	}
	u := &unleased{}
	if svc, _ := election.Elected(u, quiet); svc != Runner(u) {
		t.Error("a stage without a lease was wrapped")
	}
	bad := election
	bad.RenewDeadline = bad.LeaseDuration
	if _, err := bad.Elected(stub, quiet); err == nil {
		t.Error("a renew deadline as long as the lease was accepted")
	}
}
