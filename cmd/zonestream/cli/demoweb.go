//go:build demo

package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// portalAddr returns addr if it is free, else a free port on its host
// (port 0 asks for one), so that the demo can print the page's address
// before zonestream listens on it.
func portalAddr(addr string) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--portal-listen: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		ln, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
	}
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitPortal waits until the portal answers at base, for at most 30s.
func waitPortal(ctx context.Context, base string) error {
	url := base + "api/names"
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && resp.Header.Get("Content-Type") == "application/json" {
				return nil
			}
			err = fmt.Errorf("%s: %s", url, resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the portal at %s does not answer: %w", base, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
