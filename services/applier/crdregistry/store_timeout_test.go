package crdregistry

import (
	"context"
	"net"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// TestStoreCallsEndAtTheirTimeout: an API server that accepts the
// connection and never answers makes a listing fail at requestTimeout
// instead of holding the applier for ever.
func TestStoreCallsEndAtTheirTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	defer func(d time.Duration) { requestTimeout = d }(requestTimeout)
	requestTimeout = 500 * time.Millisecond
	s, err := NewStore(&rest.Config{Host: "http://" + ln.Addr().String()}, "default", "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.List(context.Background()); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a listing from an API server that never answered succeeded")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the listing did not end at its timeout")
	}
}
