package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/services/collector/source"
)

// With --resolve-service-load-balancer-hostname, a load balancer's
// hostname is published as the addresses it resolves to, not as a CNAME.
// Those addresses change without any Kubernetes event, so the source
// recomputes the Services that have one every ResolveInterval; the
// collector publishes only what changed.

// Resolver resolves hostnames; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Defaults of the resolution.
const (
	DefaultResolveInterval = time.Minute
	resolveTimeout         = 5 * time.Second
)

// ReasonUnresolvableHostname: a load balancer hostname has no address.
const ReasonUnresolvableHostname = "UnresolvableHostname"

// indexResolve indexes, under resolveKey, the Services whose targets are
// resolved load balancer hostnames.
const (
	indexResolve = "zonestream/resolve"
	resolveKey   = "lb-hostname"
)

func resolvedServices(obj any) ([]string, error) {
	svc, ok := obj.(*corev1.Service)
	if !ok || svc.Spec.Type != corev1.ServiceTypeLoadBalancer || len(svc.Spec.ExternalIPs) > 0 || hasValidTarget(svc) {
		return nil, nil
	}
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		if ing.Hostname != "" {
			return []string{resolveKey}, nil
		}
	}
	return nil, nil
}

// registerResolve indexes the Services to recompute periodically.
func (s *Source) registerResolve(inf cache.SharedIndexInformer) error {
	if !s.opts.ResolveLoadBalancerHostname {
		return nil
	}
	if err := source.AddIndexer(inf, indexResolve, resolvedServices); err != nil {
		return fmt.Errorf("service informer: %w", err)
	}
	s.resolveIndex = inf.GetIndexer()
	return nil
}

// Run implements source.Runner: with --resolve-service-load-balancer-hostname,
// it enqueues the Services with a load balancer hostname every
// ResolveInterval until ctx ends.
func (s *Source) Run(ctx context.Context, rt source.Runtime) {
	if s.resolveIndex == nil {
		return
	}
	tick := time.NewTicker(s.resolveInterval())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		objs, _ := s.resolveIndex.ByIndex(indexResolve, resolveKey)
		for _, o := range objs {
			if svc, ok := o.(*corev1.Service); ok {
				rt.Enqueue(source.Key{Namespace: svc.Namespace, Name: svc.Name})
			}
		}
	}
}

func (s *Source) resolveInterval() time.Duration {
	if s.opts.ResolveInterval > 0 {
		return s.opts.ResolveInterval
	}
	return DefaultResolveInterval
}

// resolve returns the addresses of a load balancer hostname. A name that
// does not exist (or has no address) is a problem of the Service: it is
// reported and skipped. Any other failure (timeout, server failure) leaves
// the Service's state unknown, so that its last published state stays
// until the next attempt succeeds: a resolver outage deletes nothing.
func (s *Source) resolve(svc *corev1.Service, host string, problems *[]error) ([]string, error) {
	r := s.opts.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	var dnsErr *net.DNSError
	switch {
	case err == nil && len(addrs) > 0:
		out := make([]string, 0, len(addrs))
		for _, a := range addrs {
			out = append(out, a.Unmap().String())
		}
		return out, nil
	case err == nil || errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		*problems = append(*problems, &source.Problem{Object: svc, Reason: ReasonUnresolvableHostname,
			Field: "status.loadBalancer.ingress.hostname", Err: fmt.Errorf("%s has no address: %v", host, err)})
		return nil, nil
	default:
		return nil, fmt.Errorf("%w: resolving load balancer hostname %s: %v", source.ErrUnknown, host, err)
	}
}
