package daemon

import "errors"

// Restartable says whether a server whose process is p, with its files in
// dir, can be started again: it was halted (p ended), not stopped for good
// (dir removed).
func Restartable(p *Process, dir string) error {
	if dir == "" {
		return errors.New("restart after Stop")
	}
	if p != nil {
		select {
		case <-p.Exited():
		default:
			return errors.New("restart while the server runs (halt it first)")
		}
	}
	return nil
}
