// Package loopback hands out loopback ports for the servers a test starts
// as processes, which must be told their port before they bind it.
//
// A port the kernel picked for a listener on port 0 and that was closed
// again is the kernel's to give to the next socket on port 0 or the next
// client's source port, and under a parallel `go test ./...` one of those
// may take it before the process binds it. Ports here are drawn at random
// below the kernel's ephemeral range instead, where it never numbers a
// socket on its own, and never twice to one test binary.
package loopback

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// lowest is where the drawn ports start: above the ports well-known
// services listen on.
const lowest = 10000

var (
	mu      sync.Mutex
	given   = map[int]bool{}
	ceiling = ephemeralStart()
)

// Port returns a loopback port free for TCP, and for UDP too when udp.
func Port(udp bool) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	var lastErr error
	for range 50 {
		port := lowest + rand.IntN(ceiling-lowest)
		if given[port] {
			continue
		}
		if err := free(port, udp); err != nil {
			lastErr = err
			continue
		}
		given[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("no loopback port free below %d: %w", ceiling, lastErr)
}

// Addr is Port(false) as "127.0.0.1:port"; it fails t when none is free.
func Addr(t testing.TB) string {
	t.Helper()
	port, err := Port(false)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// free says whether port can be bound on 127.0.0.1 now.
func free(port int, udp bool) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer l.Close()
	if !udp {
		return nil
	}
	u, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	return u.Close()
}

// ephemeralStart reads the first port of the kernel's ephemeral range;
// 32768, Linux's default, when it can't.
func ephemeralStart() int {
	const fallback = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return fallback
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return fallback
	}
	start, err := strconv.Atoi(fields[0])
	if err != nil || start <= lowest+1000 {
		return fallback
	}
	return start
}
