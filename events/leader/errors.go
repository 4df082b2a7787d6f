package leader

import "errors"

var (
	// ErrHeld: another replica holds the lease and has renewed it within
	// its lease duration.
	ErrHeld = errors.New("lease held by another replica")
	// ErrStopped: the work done while leading returned on its own, without
	// error and without being asked to stop.
	ErrStopped = errors.New("the leader's work stopped by itself")
)
