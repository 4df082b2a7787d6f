package systemtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// chaosTap keeps every delete any plan carries, with the moment it was
// seen, for the wanted ledger to judge. It is connected to the NATS server
// itself (not through the gate) and reconnects every 10ms, so that after a
// restart it is subscribed again before the gate lets a stage in.
type chaosTap struct {
	nc *nats.Conn

	mu      sync.Mutex
	planIDs map[string]bool
	deletes []tappedDelete
	lost    []string // why messages may have escaped the tap
}

// tappedDelete is one delete change of a plan.
type tappedDelete struct {
	at         time.Time // when the tap received the plan: after it was published
	plan       string
	name, kind string // DNS name (normalized) and record type
	targets    []string
}

func (d tappedDelete) String() string {
	return fmt.Sprintf("plan %s deletes %s %s %v (seen %s)", d.plan, d.name, d.kind, d.targets, d.at.Format("15:04:05.000"))
}

func connectTap(t *testing.T, url string) *chaosTap {
	t.Helper()
	tap := &chaosTap{planIDs: map[string]bool{}}
	nc, err := nats.Connect(url, nats.Name("chaos-tap"),
		nats.MaxReconnects(-1), nats.ReconnectWait(10*time.Millisecond), nats.ReconnectJitter(0, 0),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			tap.mu.Lock()
			defer tap.mu.Unlock()
			tap.lost = append(tap.lost, err.Error()) // e.g. slow consumer: plans dropped
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	tap.nc = nc
	sub := subscribePlans(t, nc, func(p *events.Plan) {
		at := time.Now()
		tap.mu.Lock()
		defer tap.mu.Unlock()
		tap.planIDs[p.ID] = true
		for _, c := range p.Changes {
			if c.New == nil && c.Old != nil {
				tap.deletes = append(tap.deletes, tappedDelete{at: at, plan: p.ID,
					name: events.NormalizeName(c.Old.DNSName), kind: c.Old.RecordType, targets: c.Old.Targets})
			}
		}
	})
	// Never drop a plan for being slow: a dropped plan is an unchecked one.
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return tap
}

// resubscribed waits (10s at most) until the tap is connected again and
// the server has its subscription.
func (tap *chaosTap) resubscribed() error {
	deadline := time.Now().Add(10 * time.Second)
	for !tap.nc.IsConnected() {
		if time.Now().After(deadline) {
			return errors.New("plan tap not reconnected after 10s")
		}
		time.Sleep(2 * time.Millisecond)
	}
	return tap.nc.FlushTimeout(5 * time.Second)
}

// deletesBetween returns the deletes seen from since until before until.
func (tap *chaosTap) deletesBetween(since, until time.Time) []tappedDelete {
	tap.mu.Lock()
	defer tap.mu.Unlock()
	var out []tappedDelete
	for _, d := range tap.deletes {
		if !d.at.Before(since) && d.at.Before(until) {
			out = append(out, d)
		}
	}
	return out
}

// resultsSeq is the last sequence of the results stream: a trial checks
// the results after it.
func (tap *chaosTap) resultsSeq(ctx context.Context) (uint64, error) {
	js, err := jetstream.New(tap.nc)
	if err != nil {
		return 0, err
	}
	s, err := js.Stream(ctx, events.StreamResults)
	if err != nil {
		return 0, err
	}
	return s.CachedInfo().State.LastSeq, nil
}

// untapped cross-checks the tap against the applier: every plan the
// applier reported on (results after seq) must have been tapped. It
// returns the ids of plans that escaped, and why the tap may have lost
// some. A plan that was applied without being tapped could have deleted
// anything unseen, so the trial cannot be vouched for.
func (tap *chaosTap) untapped(ctx context.Context, after uint64) ([]string, error) {
	js, err := jetstream.New(tap.nc)
	if err != nil {
		return nil, err
	}
	s, err := js.Stream(ctx, events.StreamResults)
	if err != nil {
		return nil, err
	}
	last := s.CachedInfo().State.LastSeq
	var missed []string
	for seq := after + 1; seq <= last; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var r events.Result
		if err := events.Unmarshal(m.Header, m.Data, &r); err != nil {
			return nil, fmt.Errorf("result %d: %w", seq, err)
		}
		tap.mu.Lock()
		seen := tap.planIDs[r.PlanID]
		tap.mu.Unlock()
		if !seen {
			missed = append(missed, r.PlanID+" ("+string(r.Status)+")")
		}
	}
	tap.mu.Lock()
	defer tap.mu.Unlock()
	if len(tap.lost) > 0 {
		missed = append(missed, "tap errors: "+strings.Join(tap.lost, "; "))
		tap.lost = nil
	}
	return missed, nil
}
