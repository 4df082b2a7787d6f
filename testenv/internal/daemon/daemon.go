// Package daemon is what the DNS-server harnesses share: running a server
// as a child process with its output kept, stopping it cleanly, starting
// it again when its port was taken, and asking it a question. Its ports
// come from testenv/loopback.
package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// Process is a running server.
type Process struct {
	name   string
	cmd    *exec.Cmd
	out    *tail
	exited chan struct{}
	mu     sync.Mutex
	err    error
}

// Start runs cmd, keeping the last 64 KiB of its output. The process gets
// its own process group (a ^C to the test does not reach it first) and is
// killed with the test process, so a crashed test leaves no server behind.
func Start(name string, cmd *exec.Cmd) (*Process, error) {
	p := &Process{name: name, cmd: cmd, out: &tail{max: 64 << 10}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.exited)
	}()
	return p, nil
}

// Exited is closed once the process has ended.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Output is the last part of what the process wrote.
func (p *Process) Output() string {
	if p == nil {
		return "" // never started
	}
	return p.out.String()
}

// ExitError says why the process ended, with the end of its output.
func (p *Process) ExitError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Errorf("%s exited (%v):\n%s", p.name, p.err, LastLines(p.out.String(), 30))
}

// Stop ends the process: SIGTERM, then SIGKILL after 10 s. Stopping no
// process (nil) does nothing.
func (p *Process) Stop() error {
	if p == nil {
		return nil
	}
	select {
	case <-p.exited:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return errors.New(p.name + " did not stop on SIGTERM, killed")
	}
}

// StopAndRemove stops p (when there is one) and removes *dir (when set),
// then clears *dir: the server cannot be restarted.
func StopAndRemove(p *Process, dir *string) error {
	err := p.Stop()
	if *dir != "" {
		if rerr := os.RemoveAll(*dir); rerr != nil && err == nil {
			err = rerr
		}
		*dir = ""
	}
	return err
}

// Query asks the server at addr for name/qtype over UDP (TCP when
// truncated) and returns the answer section. NXDOMAIN and NODATA are an
// empty answer; any other failure rcode is an error.
func Query(addr, name string, qtype uint16) ([]dns.RR, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), qtype)
	m.RecursionDesired = false
	c := &dns.Client{Net: "udp", Timeout: 2 * time.Second}
	r, _, err := c.Exchange(m, addr)
	if err == nil && r.Truncated {
		c.Net = "tcp"
		r, _, err = c.Exchange(m, addr)
	}
	if err != nil {
		return nil, fmt.Errorf("query %s %s: %w", name, dns.TypeToString[qtype], err)
	}
	switch r.Rcode {
	case dns.RcodeSuccess, dns.RcodeNameError:
		return r.Answer, nil
	}
	return nil, fmt.Errorf("query %s %s: %s", name, dns.TypeToString[qtype], dns.RcodeToString[r.Rcode])
}

// LastLines is the last n lines of s.
func LastLines(s string, n int) string {
	lines := bytes.Split(bytes.TrimRight([]byte(s), "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
