package leader

import (
	"fmt"
	"os"
	"time"
)

// The timing of an election, as client-go's leaderelection and
// kube-controller-manager's --leader-elect-* flags have it, with their
// defaults: a leader renews every RetryPeriod and gives up leading when it
// has not renewed for RenewDeadline; a standby takes over a lease it has
// seen unchanged for LeaseDuration. RenewDeadline < LeaseDuration is what
// keeps two leaders from overlapping: a deposed leader (cut off from NATS)
// stops at most RenewDeadline after its last renewal, a standby starts no
// earlier than LeaseDuration after it; the difference is the time the
// deposed leader's stage has to stop publishing.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
	// maxLeaseDuration stays well below the bucket's key TTL (24h).
	maxLeaseDuration = time.Hour
)

// Config is the timing of an election and who this replica is.
type Config struct {
	// Identity names this replica in the lease: who holds it. It must be
	// unique among live replicas and the same across restarts of one
	// replica (a container restarted in its pod): an Elector that finds
	// the lease held by its own identity, before it has ever held it,
	// takes it over at once as the restart of the replica that held it.
	Identity      string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// Defaults returns the default timing, with DefaultIdentity.
func Defaults() Config {
	return Config{Identity: DefaultIdentity(), LeaseDuration: DefaultLeaseDuration,
		RenewDeadline: DefaultRenewDeadline, RetryPeriod: DefaultRetryPeriod}
}

// DefaultIdentity is the host name and the process id: a pod's name and,
// for its container's entrypoint, the same id on every restart, so that a
// killed container's restart takes its lease back at once; on a shared
// host (a laptop, the tests) every process its own, so that two never
// take each other's lease.
func DefaultIdentity() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s_%d", host, os.Getpid())
}

// Validate checks that the timing can keep two leaders apart.
func (c Config) Validate() error {
	switch {
	case c.Identity == "":
		return fmt.Errorf("leader election: the identity must not be empty")
	case c.RetryPeriod <= 0:
		return fmt.Errorf("leader election: the retry period must be positive, got %s", c.RetryPeriod)
	case c.RenewDeadline <= c.RetryPeriod:
		return fmt.Errorf("leader election: the renew deadline (%s) must be longer than the retry period (%s)", c.RenewDeadline, c.RetryPeriod)
	case c.LeaseDuration <= c.RenewDeadline:
		return fmt.Errorf("leader election: the lease duration (%s) must be longer than the renew deadline (%s), "+
			"or a deposed leader could still work when another takes over", c.LeaseDuration, c.RenewDeadline)
	case c.LeaseDuration > maxLeaseDuration:
		return fmt.Errorf("leader election: the lease duration (%s) must be at most %s", c.LeaseDuration, maxLeaseDuration)
	}
	return nil
}
