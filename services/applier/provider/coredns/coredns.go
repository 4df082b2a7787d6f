// Package coredns is a provider for CoreDNS' etcd plugin: it keeps records
// in etcd in the SkyDNS layout that the plugin serves (and that
// ExternalDNS' coredns provider writes), one etcd key per record.
//
// Every plan is applied in one etcd transaction whose comparisons are the
// plan's preconditions: the keys the plan read must be unchanged, so a plan
// computed from stale observations changes nothing and fails with
// provider.ErrStale. See README.md for the layout.
package coredns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

var invalidEntries = promauto.NewCounter(prometheus.CounterOpts{
	Name: "zonestream_coredns_invalid_entries_total",
	Help: "etcd entries under the CoreDNS prefix that are not SkyDNS records this provider can read, skipped when listing.",
})

// Provider keeps one CoreDNS etcd plugin's records.
type Provider struct {
	cfg        Config
	etcd       *etcdConn
	defaultTTL int64
	log        *slog.Logger
}

var _ provider.Provider = (*Provider)(nil)

// New builds the provider. It does not wait for etcd: an unreachable etcd
// fails the calls, which are retried.
func New(cfg Config, opts provider.Options) (*Provider, error) {
	opts = opts.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ec := clientv3.Config{
		Endpoints:   cfg.EtcdURLs,
		DialTimeout: cfg.Timeout,
		Username:    cfg.Username,
		Password:    cfg.Password,
		// The client's own zap logs would bypass slog; errors reach us
		// through the calls.
		Logger: zap.NewNop(),
	}
	if cfg.https() {
		tc, err := cfg.tlsConfig()
		if err != nil {
			return nil, err
		}
		ec.TLS = tc
	}
	etcd, err := dialEtcd(ec, opts.Logger)
	if err != nil {
		return nil, err
	}
	p := &Provider{cfg: cfg, etcd: etcd, defaultTTL: opts.DefaultTTL, log: opts.Logger}
	return p, nil
}

// Close closes the etcd client.
func (p *Provider) Close() error { return p.etcd.Close() }

// Zones returns the zones of --coredns-zone: etcd has no zones to list.
func (p *Provider) Zones(context.Context) ([]string, error) {
	z := slices.Clone([]string(p.cfg.Zones))
	slices.Sort(z)
	return slices.Compact(z), nil
}

// Records lists every record under zone's key prefix, one endpoint per
// name, type and set identifier. Names that belong to a more specific zone
// of --coredns-zone are left to that zone. Entries that are not SkyDNS
// records are skipped, logged and counted.
func (p *Provider) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	var kvs []kv
	err := p.retry(ctx, "list "+zone, func(ctx context.Context, client *clientv3.Client) error {
		r, err := client.Get(ctx, namePath(p.cfg.Prefix, zone), clientv3.WithPrefix())
		if err != nil {
			return err
		}
		kvs = kvsOf(r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("coredns: list zone %s: %w", zone, err)
	}
	sets := map[events.RRsetKey]*events.Endpoint{}
	var keys []events.RRsetKey
	for _, e := range p.parse(kvs) {
		// A name of a more specific zone of --coredns-zone is left to it.
		if provider.ZoneOf(e.name, append([]string{zone}, p.cfg.Zones...)) != zone {
			continue
		}
		for _, pt := range e.parts {
			ep, ok := sets[pt.set]
			if !ok {
				ep = &events.Endpoint{DNSName: pt.set.DNSName, RecordType: pt.set.RecordType, SetIdentifier: pt.set.SetIdentifier, RecordTTL: pt.ttl}
				if pt.group != "" {
					ep.ProviderSpecific = []events.ProviderSpecificProperty{{Name: GroupProperty, Value: pt.group}}
				}
				sets[pt.set] = ep
				keys = append(keys, pt.set)
			}
			ep.Targets = append(ep.Targets, pt.target)
		}
	}
	eps := make([]events.Endpoint, 0, len(keys))
	for _, k := range keys {
		eps = append(eps, provider.NormalizeEndpoint(*sets[k]))
	}
	events.SortEndpoints(eps)
	return eps, nil
}

// kv is one etcd key as read, with the revision it was last changed at.
type kv struct {
	key   string
	value []byte
	rev   int64
}

func kvsOf(r *clientv3.GetResponse) []kv {
	out := make([]kv, 0, len(r.Kvs))
	for _, k := range r.Kvs {
		out = append(out, kv{key: string(k.Key), value: k.Value, rev: k.ModRevision})
	}
	return out
}

// parse reads the entries of kvs, skipping (and reporting) those that are
// not records.
func (p *Provider) parse(kvs []kv) []entry {
	out := make([]entry, 0, len(kvs))
	for _, k := range kvs {
		e, err := parseEntry(p.cfg.Prefix, k.key, k.value)
		if err != nil {
			invalidEntries.Inc()
			p.log.Warn("coredns: skipping an etcd entry that is not a record", "err", err)
			continue
		}
		out = append(out, e)
	}
	return out
}

// retry runs one etcd exchange with a timeout, retrying transient failures
// with exponential backoff and jitter.
func (p *Provider) retry(ctx context.Context, what string, f func(context.Context, *clientv3.Client) error) error {
	return provider.Retry(ctx, p.cfg.Retries, p.cfg.RetryBackoff,
		func(attempt int, wait time.Duration, last error) {
			p.log.Warn("coredns: retrying", "op", what, "attempt", attempt, "after", wait, "err", last)
		},
		func() error {
			client, err := p.etcd.connected(ctx)
			if err != nil {
				return err
			}
			actx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
			defer cancel()
			return classify(f(actx, client))
		})
}

// classify marks the etcd errors that retrying cannot cure as permanent:
// authentication, permissions, a request etcd refuses as too large or with
// too many operations.
func classify(err error) error {
	if err == nil || errors.Is(err, provider.ErrStale) || errors.Is(err, provider.ErrPermanent) {
		return err
	}
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		switch ee.Code() {
		case codes.InvalidArgument, codes.PermissionDenied, codes.Unauthenticated, codes.FailedPrecondition:
			if errors.Is(err, rpctypes.ErrTooManyOps) {
				return provider.Permanentf("%w (lower --coredns-max-txn-ops to etcd's --max-txn-ops)", err)
			}
			return provider.Permanent(err)
		}
	}
	return err
}
