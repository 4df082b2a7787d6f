// Package moto runs moto_server, Python moto's emulation of AWS APIs
// (Route53 among them), on a free loopback port, for tests that drive the
// AWS SDK against it (AWS_ENDPOINT_URL).
package moto

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/zonestream/zonestream/testenv/internal/daemon"
	"github.com/zonestream/zonestream/testenv/loopback"
)

// ErrMissing says moto_server is not installed here.
var ErrMissing = errors.New("moto: moto_server not found (pip install 'moto[server]==5.2.1', or set $ZS_MOTO_SERVER)")

// Binary is the moto_server to run: $ZS_MOTO_SERVER, else moto_server on
// $PATH, else pyenv's shim.
func Binary() (string, error) {
	if b := os.Getenv("ZS_MOTO_SERVER"); b != "" {
		return b, nil
	}
	if b, err := exec.LookPath("moto_server"); err == nil {
		return b, nil
	}
	if home, err := os.UserHomeDir(); err == nil {
		b := home + "/.pyenv/shims/moto_server"
		if err := exec.Command(b, "--help").Run(); err == nil {
			return b, nil
		}
	}
	return "", ErrMissing
}

// Server is a running moto_server.
type Server struct {
	// URL is the endpoint to give the AWS SDK (AWS_ENDPOINT_URL).
	URL  string
	proc *daemon.Process
}

// Start runs moto_server on a free loopback port and returns once it
// answers HTTP.
func Start(ctx context.Context) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	return daemon.Retry(ctx, "moto", func() (*Server, error) {
		port, err := loopback.Port(false)
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		p, err := daemon.Start("moto_server", exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port)))
		if err != nil {
			return nil, err
		}
		s := &Server{URL: "http://" + addr, proc: p}
		if err := s.wait(ctx); err != nil {
			_ = p.Stop()
			if perr := daemon.PortTaken(p, "Address already in use"); perr != nil {
				return nil, perr
			}
			return nil, err
		}
		return s, nil
	})
}

// wait polls moto's dashboard-free health answer (any HTTP answer) until
// it comes, the process ends, or 30 s pass.
func (s *Server) wait(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	c := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-s.proc.Exited():
			return s.proc.ExitError()
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if resp, err := c.Get(s.URL + "/moto-api/"); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("moto: no answer on %s within 30s:\n%s", s.URL, daemon.LastLines(s.proc.Output(), 20))
}

// Stop ends moto_server.
func (s *Server) Stop() error { return s.proc.Stop() }

// StartT starts moto_server for the test and stops it at the end; the
// test is skipped, saying so, when moto_server is not installed.
func StartT(t testing.TB) *Server {
	t.Helper()
	if _, err := Binary(); err != nil {
		t.Skip(err)
	}
	return daemon.StartT(t, "moto_server", Start)
}
