package connector_test

import (
	"encoding/gob"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// The types of ExternalDNS v0.23's endpoint package, field for field and
// type for type, as its connector servers gob-encode them: gob sends
// field names and kinds, not Go type names, so a server built on
// ExternalDNS' own package writes the same bytes (refObjects, unexported,
// is not sent).
type (
	Targets                  []string
	TTL                      int64
	Labels                   map[string]string
	ProviderSpecificProperty struct{ Name, Value string }
	ProviderSpecific         []ProviderSpecificProperty
	Endpoint                 struct {
		DNSName          string
		Targets          Targets
		RecordType       string
		SetIdentifier    string
		RecordTTL        TTL
		Labels           Labels
		ProviderSpecific ProviderSpecific
		refObjects       []*struct{ Kind string }
	}
)

// server is a connector server: each connection gets the current answer,
// gob-encoded as ExternalDNS' connector source reads it, or garbage.
type server struct {
	ln     net.Listener
	served atomic.Int64

	mu      sync.Mutex
	answer  []*Endpoint
	garbage bool
}

func startServer(t *testing.T, answer ...*Endpoint) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{ln: ln, answer: answer}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			answer, garbage := s.answer, s.garbage
			s.mu.Unlock()
			if garbage {
				_, _ = conn.Write([]byte("this is not gob\n"))
			} else {
				_ = gob.NewEncoder(conn).Encode(answer)
			}
			conn.Close()
			s.served.Add(1)
		}
	})
	return s
}

func (s *server) addr() string { return s.ln.Addr().String() }

func (s *server) set(answer ...*Endpoint) {
	s.mu.Lock()
	s.answer, s.garbage = answer, false
	s.mu.Unlock()
}

func (s *server) sendGarbage() {
	s.mu.Lock()
	s.garbage = true
	s.mu.Unlock()
}

// waitServed waits until the server has answered n more connections
// than it had when called: the source has polled that many times.
func (s *server) waitServed(t *testing.T, n int64) {
	t.Helper()
	want := s.served.Load() + n
	deadline := time.Now().Add(collectortest.WaitFor)
	for s.served.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("server answered %d connections, want %d", s.served.Load(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
