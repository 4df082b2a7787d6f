package stage

import "errors"

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
