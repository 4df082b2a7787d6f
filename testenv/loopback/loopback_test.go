package loopback

import (
	"net"
	"testing"
)

func TestPortsAreBindableDistinctAndBelowTheEphemeralRange(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		port, err := Port(true)
		if err != nil {
			t.Fatal(err)
		}
		if port < lowest || port >= ceiling {
			t.Fatalf("port %d outside [%d, %d)", port, lowest, ceiling)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
	}
	// Addr's port is really bindable.
	addr := Addr(t)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	l.Close()
}

func TestFreeRefusesAPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	if err := free(taken, false); err == nil {
		t.Fatalf("free(%d) = nil for a port with a listener", taken)
	}
}
