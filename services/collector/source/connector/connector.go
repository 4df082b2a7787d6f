// Package connector holds the collector's connector source: endpoints a
// program of the user's own serves over TCP, in ExternalDNS' connector
// protocol (one gob-encoded []*endpoint.Endpoint per connection), polled
// as ExternalDNS polls it (see README.md beside this file).
//
// Its endpoints come from no Kubernetes object: the source has one
// "object", the server, keyed by its address, and publishes the server's
// whole answer as that object's state.
package connector

import (
	"flag"
	"log/slog"
	"time"

	"github.com/zonestream/zonestream/services/collector/source"
)

// Name is the --source name.
const Name = "connector"

// DefaultServer is ExternalDNS' default --connector-source-server.
const DefaultServer = "localhost:8080"

// DefaultPollInterval is how often the server is asked: ExternalDNS asks
// it once per reconcile, every --interval, one minute by default.
const DefaultPollInterval = time.Minute

// DialTimeout bounds a connection attempt, as in ExternalDNS.
const DialTimeout = 30 * time.Second

// ReasonInvalidEndpoint: an endpoint the server sent is not a valid
// record; skipped, the others published.
const ReasonInvalidEndpoint = "InvalidEndpoint"

// Flags are the source's own flags, ExternalDNS' names.
type Flags struct {
	// Server is the host:port the endpoints are read from
	// (--connector-source-server).
	Server string
	// PollInterval is how often the server is asked (default
	// DefaultPollInterval; not a flag).
	PollInterval time.Duration
	// ReadTimeout bounds reading one answer (default DialTimeout; not a
	// flag): a server that accepts and never answers must not stall the
	// source.
	ReadTimeout time.Duration
}

// RegisterFlags adds the source's flags to fs.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.Server, "connector-source-server", DefaultServer,
		"connector source: host:port of the TCP server sending the endpoints (ExternalDNS' gob protocol), asked once a minute")
}

// Options configure the source.
type Options struct {
	Flags
	// Logger receives the polls' outcomes (default slog.Default).
	Logger *slog.Logger
}

// key is the source's one object: the server.
func key(server string) source.Key { return source.Key{Name: server} }
