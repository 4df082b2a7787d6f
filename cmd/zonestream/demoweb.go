package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// portalAddr returns addr, with a free port in place of port 0, so that the
// demo can print the page's address before zonestream listens on it.
func portalAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--portal-listen: %w", err)
	}
	if port != "0" {
		return addr, nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitHTTP waits until url answers, for at most 30s.
func waitHTTP(ctx context.Context, url string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the portal's page at %s does not answer: %w", url, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
