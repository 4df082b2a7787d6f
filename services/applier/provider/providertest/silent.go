package providertest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Silent is a provider that accepts connections and never answers: a
// loopback TCP listener that reads whatever it is sent and writes nothing.
type Silent struct {
	// Addr is its host:port.
	Addr string

	mu       sync.Mutex
	accepted int
	open     int
}

// SilentT starts a Silent listener, closed when t ends.
func SilentT(t testing.TB) *Silent {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Silent{Addr: l.Addr().String()}
	var conns sync.WaitGroup
	var mu sync.Mutex
	var all []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			all = append(all, c)
			mu.Unlock()
			s.mu.Lock()
			s.accepted++
			s.open++
			s.mu.Unlock()
			conns.Add(1)
			go func() {
				defer conns.Done()
				// Read until the client hangs up: that is when it gave up.
				_, _ = io.Copy(io.Discard, c)
				s.mu.Lock()
				s.open--
				s.mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range all {
			c.Close()
		}
		mu.Unlock()
		conns.Wait()
	})
	return s
}

// URL is its address as an http:// URL.
func (s *Silent) URL() string { return "http://" + s.Addr }

// Accepted is how many connections it accepted.
func (s *Silent) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// Open is how many of them the clients have not closed yet: a client
// whose request was cut off closes its connection.
func (s *Silent) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}
