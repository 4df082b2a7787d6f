package collector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	nodesource "github.com/zonestream/zonestream/services/collector/source/node"
	"github.com/zonestream/zonestream/stage"
)

// clusterScoped are the sources whose objects belong to no namespace:
// --namespace does not narrow them, so with several namespaces only the
// first namespace's collector runs them (two collectors would publish the
// same subjects).
var clusterScoped = []string{nodesource.Name}

// NewForNamespaces is New for --namespace given any number of times
// (ExternalDNS v0.24 takes it more than once): none or one, one
// Collector; several, one Collector per namespace, each with its own
// informers, lease and completeness mark on the bus, run together.
func NewForNamespaces(cfg Config, logger *slog.Logger) (stage.Runner, error) {
	namespaces := slices.Compact(slices.Sorted(slices.Values(cfg.Namespaces)))
	if len(namespaces) <= 1 {
		if len(namespaces) == 1 {
			cfg.Namespace = namespaces[0]
		}
		return New(cfg, logger)
	}
	var set namespaceCollectors
	for i, ns := range namespaces {
		c := cfg
		c.Namespace, c.Namespaces = ns, nil
		if i > 0 {
			c.Sources = slices.DeleteFunc(slices.Clone(cfg.Sources), func(s string) bool { return slices.Contains(clusterScoped, s) })
			if len(c.Sources) == 0 {
				break // only cluster-scoped sources: the first runs them all
			}
		}
		col, err := New(c, logger.With("namespace", ns))
		if err != nil {
			return nil, fmt.Errorf("--namespace=%s: %w", ns, err)
		}
		set = append(set, namespaceCollector{ns, col})
	}
	return set, nil
}

type namespaceCollector struct {
	namespace string
	*Collector
}

// namespaceCollectors run as one stage: all of them until ctx ends, or
// none once one of them cannot go on.
type namespaceCollectors []namespaceCollector

func (s namespaceCollectors) Run(ctx context.Context, js jetstream.JetStream) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(s))
	var wg sync.WaitGroup
	for i, c := range s {
		wg.Go(func() {
			if err := c.Run(ctx, js); err != nil {
				errs[i] = fmt.Errorf("namespace %s: %w", c.namespace, err)
				cancel()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Ready is nil once every namespace's collector is.
func (s namespaceCollectors) Ready() error {
	for _, c := range s {
		if err := c.Ready(); err != nil {
			return fmt.Errorf("namespace %s: %w", c.namespace, err)
		}
	}
	return nil
}
