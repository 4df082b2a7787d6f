package stage

import (
	"errors"
	"time"
)

// ErrFinished ends a runner that ran its one pass to its end (--once):
// the process stops every other stage and exits. A runner returns it
// alone when the pass converged, wrapped with what did not when it did
// not (then the process exits non-zero).
var ErrFinished = errors.New("one pass finished (--once)")

// Finished is what a process makes of a runner's error: nil for a pass
// that converged, the error otherwise.
func Finished(err error) error {
	if err == ErrFinished {
		return nil
	}
	return err
}

// DefaultOnceTimeout bounds a --once pass unless --once-timeout says
// otherwise: long enough for a first pass over 100,000 names (about a
// minute here), short enough that a CronJob stuck on a dead API server
// is seen the same hour.
const DefaultOnceTimeout = 10 * time.Minute
