// Package stagetest holds what tests of a process' plumbing share.
package stagetest

import (
	"io"
	"os"
	"testing"
)

// Stderr runs f with os.Stderr a pipe and returns what f wrote to it: a
// process' log handler writes there.
func Stderr(t testing.TB, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	out := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		out <- string(b)
	}()
	func() {
		defer func() { os.Stderr = saved }()
		f()
	}()
	w.Close()
	return <-out
}
