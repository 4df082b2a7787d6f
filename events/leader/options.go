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
	// Identity names this replica in the lease, for people: who holds it.
	// Two replicas may share one (it is not what tells them apart).
	Identity      string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// Defaults returns the default timing, with the host name as identity (a
// pod's name in Kubernetes).
func Defaults() Config {
	host, _ := os.Hostname()
	return Config{Identity: host, LeaseDuration: DefaultLeaseDuration,
		RenewDeadline: DefaultRenewDeadline, RetryPeriod: DefaultRetryPeriod}
}

// Validate checks that the timing can keep two leaders apart.
func (c Config) Validate() error {
	switch {
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
