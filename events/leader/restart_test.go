package leader

import (
	"sync/atomic"
	"testing"
	"time"
)

// kill stops c as SIGKILL would: cut off first, so that its lease is
// neither released nor renewed again.
func (c *candidate) kill(t *testing.T) {
	t.Helper()
	c.proxy.cut()
	c.cancel()
	<-c.done
	c.done <- nil // for the cleanup
}

// TestRestartedReplicaTakesItsLeaseBackAtOnce kills the leader and starts
// it again under the same identity (a container restarted in its pod)
// beside a standby of another identity: the restart leads within a retry
// period of starting, not a lease duration, and the standby never leads.
func TestRestartedReplicaTakesItsLeaseBackAtOnce(t *testing.T) {
	url := startNATS(t)
	var active, overlaps atomic.Int32
	a := startCandidate(t, url, "a", fast, &active, &overlaps)
	waitLeader(t, []*candidate{a}, 2*time.Second)
	a.kill(t)

	restarted := time.Now()
	again := startCandidate(t, url, "a", fast, &active, &overlaps)
	b := startCandidate(t, url, "b", fast, &active, &overlaps)
	if got := waitLeader(t, []*candidate{again, b}, 2*time.Second); got != again {
		t.Fatalf("%s took the lease, not the restarted replica", got.name)
	}
	took := again.lastPeriod()[0].Sub(restarted)
	if took >= fast.LeaseDuration/2 {
		t.Fatalf("the restart took its lease back %s after starting: it waited for the lease to lapse (%s)", took, fast.LeaseDuration)
	}
	t.Logf("the restart took its lease back %s after starting", took.Round(time.Millisecond))
	time.Sleep(3 * fast.LeaseDuration)
	if !again.leading() || b.leading() {
		t.Fatalf("after three lease durations: the restart leading %v, the standby leading %v", again.leading(), b.leading())
	}
	if overlaps.Load() != 0 {
		t.Fatal("two leaders at once")
	}
}

// TestTwoLiveReplicasOfOneIdentityDoNotTrade runs a second replica under
// the leader's identity while the leader lives, which the identity's
// rule forbids: the second takes the lease, the first stops at its next
// renewal and then stands by like any other replica, so that the two
// do not pass the lease back and forth.
func TestTwoLiveReplicasOfOneIdentityDoNotTrade(t *testing.T) {
	url := startNATS(t)
	var active, overlaps atomic.Int32
	first := startCandidate(t, url, "a", fast, &active, &overlaps)
	waitLeader(t, []*candidate{first}, 2*time.Second)
	second := startCandidate(t, url, "a", fast, &active, &overlaps)
	deadline := time.Now().Add(2 * time.Second)
	for !second.leading() || first.leading() {
		if time.Now().After(deadline) {
			t.Fatalf("after 2s: first leading %v, second leading %v", first.leading(), second.leading())
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopped, started := first.lastPeriod()[1], second.lastPeriod()[0]
	if overlap := stopped.Sub(started); overlap > jitterMax(fast.RetryPeriod)+fast.RetryPeriod {
		t.Fatalf("the first replica worked on %s after the second took over, past its next renewal", overlap)
	} else {
		t.Logf("the two overlapped for %s", overlap.Round(time.Millisecond))
	}
	time.Sleep(3 * fast.LeaseDuration)
	first.mu.Lock()
	periods := len(first.periods)
	first.mu.Unlock()
	if first.leading() || !second.leading() || periods != 1 {
		t.Fatalf("after three lease durations: first leading %v (periods %d), second leading %v", first.leading(), periods, second.leading())
	}
}
