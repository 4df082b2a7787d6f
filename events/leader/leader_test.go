package leader

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events/internal/natstest"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// Short timings, in the same proportions as the defaults.
var fast = Config{Identity: "test", LeaseDuration: 1500 * time.Millisecond, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond}

func startNATS(t *testing.T) string {
	t.Helper()
	url := natstest.Start(t, nil)
	_, js := connect(t, url)
	if err := events.EnsureLeases(context.Background(), js); err != nil {
		t.Fatal(err)
	}
	return url
}

func connect(t *testing.T, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	return natstest.Connect(t, url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
}

// candidate is one replica: an Elector on its own connection (through a
// proxy that can cut it off), and the times its work started and ended.
type candidate struct {
	name   string
	proxy  *proxy
	el     *Elector
	cancel context.CancelFunc
	done   chan error

	mu      sync.Mutex
	periods [][2]time.Time // [start, end] of each time it led; end zero while leading
}

func startCandidate(t *testing.T, url, name string, cfg Config, active *atomic.Int32, overlaps *atomic.Int32) *candidate {
	t.Helper()
	c := &candidate{name: name, proxy: startProxy(t, url), done: make(chan error, 1)}
	_, js := connect(t, c.proxy.url())
	cfg.Identity = name
	el, err := New(context.Background(), js, "test.lease", cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.el = el
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go func() {
		c.done <- el.Run(ctx, func(ctx context.Context) error {
			if active.Add(1) > 1 {
				overlaps.Add(1)
			}
			c.mu.Lock()
			c.periods = append(c.periods, [2]time.Time{time.Now()})
			c.mu.Unlock()
			<-ctx.Done()
			c.mu.Lock()
			c.periods[len(c.periods)-1][1] = time.Now()
			c.mu.Unlock()
			active.Add(-1)
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); c.proxy.heal(); <-c.done })
	return c
}

// leading reports whether the candidate's work runs now.
func (c *candidate) leading() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.periods) > 0 && c.periods[len(c.periods)-1][1].IsZero()
}

func (c *candidate) lastPeriod() [2]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.periods) == 0 {
		return [2]time.Time{}
	}
	return c.periods[len(c.periods)-1]
}

// waitLeader waits until exactly one of cs leads, and returns it.
func waitLeader(t *testing.T, cs []*candidate, within time.Duration) *candidate {
	t.Helper()
	return waitNewLeader(t, cs, nil, within)
}

// waitNewLeader waits until exactly one of cs leads, other than old.
func waitNewLeader(t *testing.T, cs []*candidate, old *candidate, within time.Duration) *candidate {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var leaders []*candidate
		for _, c := range cs {
			if c.leading() {
				leaders = append(leaders, c)
			}
		}
		if len(leaders) == 1 && leaders[0] != old {
			return leaders[0]
		}
		if len(leaders) > 1 {
			t.Fatalf("%d leaders at once", len(leaders))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no leader within %s", within)
	return nil
}

func TestAcquireRenewAndRelease(t *testing.T) {
	url := startNATS(t)
	var active, overlaps atomic.Int32
	a := startCandidate(t, url, "a", fast, &active, &overlaps)
	if got := waitLeader(t, []*candidate{a}, 2*time.Second); got != a {
		t.Fatal("a alone did not lead")
	}
	b := startCandidate(t, url, "b", fast, &active, &overlaps)
	// a renews: over three lease durations, b never takes over.
	time.Sleep(3 * fast.LeaseDuration)
	a.mu.Lock()
	periods := len(a.periods)
	a.mu.Unlock()
	if !a.leading() || b.leading() || periods != 1 {
		t.Fatalf("a did not keep the lease it renews: a leading %v (periods %d), b leading %v", a.leading(), periods, b.leading())
	}
	// a stops and releases: b takes over without waiting for the lease to lapse.
	released := time.Now()
	a.cancel()
	if err := <-a.done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a's Run: %v", err)
	}
	a.done <- nil // for the cleanup
	waitLeader(t, []*candidate{a, b}, 2*time.Second)
	if took := b.lastPeriod()[0].Sub(released); took >= fast.LeaseDuration {
		t.Fatalf("b took over %s after a released the lease, as late as a lapse", took)
	} else {
		t.Logf("b took over %s after a released the lease", took)
	}
	if overlaps.Load() != 0 {
		t.Fatal("two leaders at once")
	}
}

// TestPartitionedLeaderStopsBeforeAnotherStarts cuts the leader off from
// NATS: it stops its work by its renew deadline, the standby starts only
// once the lease has lapsed, and after the partition heals the old leader
// stands by.
func TestPartitionedLeaderStopsBeforeAnotherStarts(t *testing.T) {
	url := startNATS(t)
	var active, overlaps atomic.Int32
	a := startCandidate(t, url, "a", fast, &active, &overlaps)
	waitLeader(t, []*candidate{a}, 2*time.Second)
	b := startCandidate(t, url, "b", fast, &active, &overlaps)
	time.Sleep(fast.LeaseDuration)

	cut := time.Now()
	a.proxy.cut()
	waitNewLeader(t, []*candidate{a, b}, a, 3*fast.LeaseDuration)
	aStopped, bStarted := a.lastPeriod()[1], b.lastPeriod()[0]
	if aStopped.IsZero() || !aStopped.Before(bStarted) {
		t.Fatalf("the cut-off leader stopped at %v, the standby started at %v: they overlapped", aStopped, bStarted)
	}
	if d := aStopped.Sub(cut); d > fast.RenewDeadline+fast.RetryPeriod {
		t.Fatalf("the cut-off leader worked on for %s, past its renew deadline %s", d, fast.RenewDeadline)
	}
	t.Logf("cut-off leader stopped %s after the cut; standby took over %s after the cut, %s after the old one stopped",
		aStopped.Sub(cut).Round(time.Millisecond), bStarted.Sub(cut).Round(time.Millisecond), bStarted.Sub(aStopped).Round(time.Millisecond))

	a.proxy.heal()
	time.Sleep(3 * fast.LeaseDuration)
	if a.leading() || !b.leading() {
		t.Fatalf("after the partition healed: a leading %v, b leading %v", a.leading(), b.leading())
	}
	if overlaps.Load() != 0 {
		t.Fatal("two leaders at once")
	}
}

// TestNoTwoLeadersAmongRacingCandidates starts five candidates at once,
// then, round after round, cuts the current leader off: one leads at a
// time, always, and another takes over each round.
func TestNoTwoLeadersAmongRacingCandidates(t *testing.T) {
	url := startNATS(t)
	var active, overlaps atomic.Int32
	var cs []*candidate
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		cs = append(cs, startCandidate(t, url, n, fast, &active, &overlaps))
	}
	const rounds = 6
	for round := range rounds {
		leader := waitLeader(t, cs, 3*fast.LeaseDuration)
		leader.proxy.cut()
		next := waitNewLeader(t, cs, leader, 4*fast.LeaseDuration)
		if stopped, started := leader.lastPeriod()[1], next.lastPeriod()[0]; !stopped.Before(started) {
			t.Fatalf("round %d: %s stopped at %v, %s started at %v", round, leader.name, stopped, next.name, started)
		}
		leader.proxy.heal()
	}
	if overlaps.Load() != 0 {
		t.Fatalf("two leaders at once %d times", overlaps.Load())
	}
}

// proxy forwards TCP to NATS; cut stops forwarding (a partition: nothing
// arrives, nothing is refused), heal resumes.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	paused bool
	resume chan struct{}
}

func startProxy(t *testing.T, natsURL string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &proxy{ln: ln, target: natsURL[len("nats://"):], resume: make(chan struct{})}
	close(p.resume)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			go p.pipe(c, s)
			go p.pipe(s, c)
		}
	}()
	return p
}

func (p *proxy) url() string { return "nats://" + p.ln.Addr().String() }

func (p *proxy) pipe(from, to net.Conn) {
	defer from.Close()
	defer to.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			p.mu.Lock()
			resume := p.resume
			p.mu.Unlock()
			<-resume
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		p.paused, p.resume = true, make(chan struct{})
	}
}

func (p *proxy) heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused {
		p.paused = false
		close(p.resume)
	}
}

// TestFailedWorkCampaignsAgain: work that fails on its own (the bus in
// trouble) gives the lease up and is tried again after a backoff; Run
// keeps going rather than end the process, and returns only with ctx.
func TestFailedWorkCampaignsAgain(t *testing.T) {
	url := startNATS(t)
	_, js := connect(t, url)
	el, err := New(context.Background(), js, "test.failing", fast, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runs atomic.Int32
	working := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- el.Run(ctx, func(ctx context.Context) error {
			if runs.Add(1) <= 2 {
				return errors.New("watch ZS_DESIRED: context deadline exceeded")
			}
			close(working)
			<-ctx.Done()
			return nil
		})
	}()
	select {
	case <-working:
	case err := <-done:
		t.Fatalf("Run ended after %d runs of failing work: %v", runs.Load(), err)
	case <-time.After(10 * fast.LeaseDuration):
		t.Fatalf("the work ran %d times, never a third", runs.Load())
	}
	if !el.Leading() {
		t.Error("the third run works but the elector does not lead")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run returned %v once ctx ended, want context.Canceled", err)
	}
}

func TestFailureBackoffDoublesUpToTheLeaseDuration(t *testing.T) {
	for failures, want := range map[int]time.Duration{1: 200 * time.Millisecond, 2: 400 * time.Millisecond, 3: 800 * time.Millisecond, 4: 1500 * time.Millisecond, 9: 1500 * time.Millisecond} {
		if got := failureBackoff(fast, failures); got != want {
			t.Errorf("after %d failures: %s, want %s", failures, got, want)
		}
	}
}

// TestLeaderRenewsWithoutReading: a leader that wrote the lease last
// renews it by compare-and-set alone, without reading it first.
func TestLeaderRenewsWithoutReading(t *testing.T) {
	url := startNATS(t)
	var active, overlaps atomic.Int32
	a := startCandidate(t, url, "a", fast, &active, &overlaps)
	waitLeader(t, []*candidate{a}, 2*time.Second)
	nc, js := connect(t, url)
	var reads atomic.Int32
	// kv.Get is a direct get on the bucket's stream.
	sub, err := nc.Subscribe("$JS.API.DIRECT.GET."+events.LeaseStream+".>", func(*nats.Msg) { reads.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// The test learns the lease's revision from the bucket stream's last
	// sequence (one key is written), so that it reads nothing itself.
	revision := func() uint64 {
		stream, err := js.Stream(context.Background(), events.LeaseStream)
		if err != nil {
			t.Fatal(err)
		}
		return stream.CachedInfo().State.LastSeq
	}
	first := revision()
	time.Sleep(10 * fast.RetryPeriod)
	renewals := revision() - first
	if renewals < 5 || !a.leading() {
		t.Fatalf("%d renewals in %s (leading %v), want about 10", renewals, 10*fast.RetryPeriod, a.leading())
	}
	if n := reads.Load(); n != 0 {
		t.Fatalf("the leader read the lease %d times over %d renewals, want 0", n, renewals)
	}
}

// TestLeaderLosesALeaseWrittenUnderIt: when someone else writes the lease
// (an operator's `nats kv put`, a replica that judged it lapsed), the
// leader's compare-and-set fails, and it stops working rather than
// renewing over it.
func TestLeaderLosesALeaseWrittenUnderIt(t *testing.T) {
	url := startNATS(t)
	var active, overlaps atomic.Int32
	a := startCandidate(t, url, "a", fast, &active, &overlaps)
	waitLeader(t, []*candidate{a}, 2*time.Second)
	_, js := connect(t, url)
	kv, err := js.KeyValue(context.Background(), events.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	other := `{"holder":"other","run":"other-run","leaseMillis":60000}`
	if _, err := kv.Put(context.Background(), "test.lease", []byte(other)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(fast.RenewDeadline + time.Second)
	for a.leading() {
		if time.Now().After(deadline) {
			t.Fatal("the leader kept working on a lease another holder wrote")
		}
		time.Sleep(10 * time.Millisecond)
	}
	entry, err := kv.Get(context.Background(), "test.lease")
	if err != nil {
		t.Fatal(err)
	}
	if string(entry.Value()) != other {
		t.Fatalf("the lease was written over: %s", entry.Value())
	}
}

// election is a leader a and a standby b that has seen a's lease, on a
// NATS of their own, and the lease bucket as an operator opens it.
type election struct {
	url              string
	js               jetstream.JetStream
	kv               jetstream.KeyValue
	active, overlaps atomic.Int32
	a, b             *candidate
}

func leaderAndStandby(t *testing.T) *election {
	t.Helper()
	e := &election{url: startNATS(t)}
	_, e.js = connect(t, e.url)
	kv, err := e.js.KeyValue(context.Background(), events.BucketLeases)
	if err != nil {
		t.Fatal(err)
	}
	e.kv = kv
	e.a = startCandidate(t, e.url, "a", fast, &e.active, &e.overlaps)
	waitLeader(t, []*candidate{e.a}, 2*time.Second)
	e.b = startCandidate(t, e.url, "b", fast, &e.active, &e.overlaps)
	time.Sleep(fast.LeaseDuration) // b has seen a's lease
	return e
}

// vanish removes the lease key the ways an operator can: `nats kv del`
// leaves a delete marker, which even a replica that never saw the key
// reads as a key gone (traced); a purge of its subject from the bucket's
// stream leaves nothing (the bucket takes no rollup, so no `nats kv
// purge`).
var vanish = map[string]struct {
	remove func(context.Context, jetstream.JetStream, string) error
	traced bool
}{
	"deleted": {func(ctx context.Context, js jetstream.JetStream, key string) error {
		kv, err := js.KeyValue(ctx, events.BucketLeases)
		if err != nil {
			return err
		}
		return kv.Delete(ctx, key)
	}, true},
	"purged": {func(ctx context.Context, js jetstream.JetStream, key string) error {
		st, err := js.Stream(ctx, events.LeaseStream)
		if err != nil {
			return err
		}
		return st.Purge(ctx, jetstream.WithPurgeSubject(events.LeaseSubject(key)))
	}, false},
}

// TestVanishedLeaseIsWaitedOut: the lease key vanishes while its leader
// is cut off from NATS (so it can neither renew nor stop being sure it
// leads until its renew deadline). A standby that saw the key, and one
// that starts only now when the key left a delete marker, take over no
// sooner than a full lease after the key was last seen: never while the
// old leader may still work.
func TestVanishedLeaseIsWaitedOut(t *testing.T) {
	for how, v := range vanish {
		t.Run(how, func(t *testing.T) {
			e := leaderAndStandby(t)
			a, b := e.a, e.b
			a.proxy.cut()
			if err := v.remove(context.Background(), e.js, "test.lease"); err != nil {
				t.Fatal(err)
			}
			gone := time.Now()
			standbys := []*candidate{b}
			if v.traced {
				standbys = append(standbys, startCandidate(t, e.url, "c", fast, &e.active, &e.overlaps))
			}
			next := waitStarted(t, standbys, 4*fast.LeaseDuration)
			for a.leading() && time.Since(gone) < 4*fast.LeaseDuration {
				time.Sleep(10 * time.Millisecond)
			}
			aStopped, started := a.lastPeriod()[1], next.lastPeriod()[0]
			t.Logf("lease %s: %s took over %s after, the cut-off leader stopped %s after (overlap %s)", how, next.name,
				started.Sub(gone).Round(time.Millisecond), aStopped.Sub(gone).Round(time.Millisecond),
				max(0, aStopped.Sub(started)).Round(time.Millisecond))
			// b last saw the key at most one (jittered) retry period
			// before it vanished.
			if waited := started.Sub(gone); waited < fast.LeaseDuration-jitterMax(fast.RetryPeriod) {
				t.Errorf("%s took over %s after the key vanished, less than a lease (%s) since it was last seen", next.name, waited, fast.LeaseDuration)
			}
			if aStopped.IsZero() || !aStopped.Before(started) || e.overlaps.Load() != 0 {
				t.Errorf("the cut-off leader stopped at %v, %s started at %v: two leaders at once", aStopped, next.name, started)
			}
		})
	}
}

// TestLeaderKeepsALeaseThatVanishedUnderIt: a leader that finds its
// lease key gone writes it again at its next renewal; the standby, which
// waits out a vanished key, never takes over.
func TestLeaderKeepsALeaseThatVanishedUnderIt(t *testing.T) {
	for how, v := range vanish {
		t.Run(how, func(t *testing.T) {
			e := leaderAndStandby(t)
			a, b := e.a, e.b
			if err := v.remove(context.Background(), e.js, "test.lease"); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * fast.LeaseDuration)
			a.mu.Lock()
			periods := len(a.periods)
			a.mu.Unlock()
			if !a.leading() || periods != 1 || b.leading() || e.overlaps.Load() != 0 {
				t.Fatalf("after the lease was %s: a leading %v (periods %d), b leading %v, overlaps %d",
					how, a.leading(), periods, b.leading(), e.overlaps.Load())
			}
			entry, err := e.kv.Get(context.Background(), "test.lease")
			if err != nil {
				t.Fatalf("the leader did not write its lease again: %v", err)
			}
			var rec record
			if err := json.Unmarshal(entry.Value(), &rec); err != nil || rec.Holder != "a" {
				t.Fatalf("the lease holds %s, want a's record", entry.Value())
			}
		})
	}
}

// waitStarted waits until one of cs has started leading, and returns it.
func waitStarted(t *testing.T, cs []*candidate, within time.Duration) *candidate {
	t.Helper()
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, c := range cs {
			if !c.lastPeriod()[0].IsZero() {
				return c
			}
		}
	}
	t.Fatalf("none of %d candidates led within %s", len(cs), within)
	return nil
}

// jitterMax is the longest jitter(d).
func jitterMax(d time.Duration) time.Duration { return d + d/5 }
