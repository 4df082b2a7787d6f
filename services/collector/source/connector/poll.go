package connector

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	crdsource "github.com/zonestream/zonestream/services/collector/source/crd"
)

// Source is the connector source: one state, the server's last answer.
type Source struct {
	opts Options

	mu sync.Mutex
	// asked: a poll has finished, answered or not (the source is synced:
	// the collector need not wait for a server that may never come).
	asked bool
	// known: the server answered once; eps is its last answer.
	known bool
	eps   []events.Endpoint
	// failed is why the last poll failed (nil: it did not).
	failed error
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Runner = (*Source)(nil)
)

// New validates the options and returns the source; it does no I/O.
func New(opts Options) (*Source, error) {
	if opts.Server == "" {
		opts.Server = DefaultServer
	}
	if _, _, err := net.SplitHostPort(opts.Server); err != nil {
		return nil, fmt.Errorf("--connector-source-server %q: %w", opts.Server, err)
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DialTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Source{opts: opts}, nil
}

// Name implements source.Source.
func (s *Source) Name() string { return Name }

// Register implements source.Source: no informer; the source is synced
// once the server has been asked once, answered or not.
func (s *Source) Register(informers.SharedInformerFactory, func(source.Key)) (cache.InformerSynced, error) {
	return func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.asked
	}, nil
}

// Run implements source.Runner: it asks the server now and then every
// PollInterval, and enqueues the server's key after each poll.
func (s *Source) Run(ctx context.Context, rt source.Runtime) {
	log := s.opts.Logger.With("server", s.opts.Server)
	for {
		s.poll(ctx, log)
		rt.Enqueue(key(s.opts.Server))
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.opts.PollInterval):
		}
	}
}

// poll asks the server once. A failure keeps the last answer: as in
// ExternalDNS, a server that cannot be read changes nothing.
func (s *Source) poll(ctx context.Context, log *slog.Logger) {
	eps, err := s.ask(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = true
	if err != nil {
		if s.failed == nil {
			log.Warn("connector server not read; its last endpoints are kept", "err", err)
		}
		s.failed = err
		return
	}
	if s.failed != nil || !s.known {
		log.Info("connector server read", "endpoints", len(eps))
	}
	s.known, s.eps, s.failed = true, eps, nil
}

// ask dials the server and reads its one answer.
func (s *Source) ask(ctx context.Context) ([]events.Endpoint, error) {
	d := net.Dialer{Timeout: DialTimeout}
	conn, err := d.DialContext(ctx, "tcp", s.opts.Server)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := conn.SetReadDeadline(time.Now().Add(s.opts.ReadTimeout)); err != nil {
		return nil, err
	}
	return Decode(conn)
}

// Endpoints implements source.Source: the server's last answer, its
// invalid endpoints skipped as problems. Until the server has answered,
// and while it cannot be read, the state is unknown: nothing is published
// or taken back. The key of another server (a former
// --connector-source-server) does not exist.
func (s *Source) Endpoints(k source.Key) ([]events.Endpoint, bool, []error) {
	if k != key(s.opts.Server) {
		return nil, false, nil
	}
	s.mu.Lock()
	known, eps, failed := s.known, slices.Clone(s.eps), s.failed
	s.mu.Unlock()
	switch {
	case failed != nil:
		return nil, false, []error{fmt.Errorf("%w: connector server %s: %v", source.ErrUnknown, s.opts.Server, failed)}
	case !known:
		return nil, false, []error{source.ErrUnknown}
	}
	var valid []events.Endpoint
	var problems []error
	for _, ep := range eps {
		if err := crdsource.ValidateEndpoint(&ep); err != nil {
			problems = append(problems, &source.Problem{Reason: ReasonInvalidEndpoint, Field: "endpoint " + ep.DNSName, Err: err})
			continue
		}
		valid = append(valid, ep)
	}
	merged, conflicts := merge(valid)
	return merged, true, append(problems, conflicts...)
}

// merge joins the endpoints of one RRset (name, type, set identifier)
// into one, as ExternalDNS merges the connector's answer: the targets of
// all, the TTL and properties of the first. A CNAME has one target: a
// second CNAME of the name to another target is a conflict, skipped (the
// first kept) and returned as a problem.
func merge(eps []events.Endpoint) ([]events.Endpoint, []error) {
	var out []events.Endpoint
	var conflicts []error
	at := map[events.RRsetKey]int{}
	for _, ep := range eps {
		ep.Normalize()
		ep.DNSName = strings.TrimSuffix(ep.DNSName, ".")
		k := ep.Key()
		i, seen := at[k]
		switch {
		case !seen:
			at[k] = len(out)
			out = append(out, ep)
		case ep.RecordType == events.RecordTypeCNAME:
			if !slices.Equal(out[i].Targets, ep.Targets) {
				conflicts = append(conflicts, &source.Problem{Reason: ReasonInvalidEndpoint, Field: "endpoint " + ep.DNSName,
					Err: fmt.Errorf("CNAME to %v conflicts with the CNAME to %v sent before it", ep.Targets, out[i].Targets)})
			}
		default:
			out[i].Targets = append(out[i].Targets, ep.Targets...)
			out[i].Normalize()
		}
	}
	events.SortEndpoints(out)
	return out, conflicts
}
