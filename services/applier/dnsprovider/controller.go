package dnsprovider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/stage"
)

// Controller runs one applier per DNSProvider and ClusterDNSProvider.
type Controller struct {
	cfg   Config
	build Builder
	log   *slog.Logger

	dyn    dynamic.Interface
	kc     kubernetes.Interface
	synced atomic.Bool

	mu      sync.Mutex
	entries map[string]*entry // by bus name
}

// entry is what the controller knows of one object.
type entry struct {
	obj     *Object
	run     *running
	version string   // the generation, Secret and retiring its applier was built for
	refusal *refusal // why nothing runs for it, nil when its applier does
}

var _ stage.Runner = (*Controller)(nil)

// New builds the controller. build builds the providers that are not
// zonestream's own (a build with -tags externaldns passes ExternalDNS'):
// nil refuses them (Ready False, ProviderNotAvailable).
func New(cfg Config, build Builder, logger *slog.Logger) (*Controller, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.StatusInterval <= 0 {
		cfg.StatusInterval = 2 * time.Second
	}
	rc, err := cfg.restConfig()
	if err != nil {
		return nil, fmt.Errorf("--dnsproviders: kubernetes client: %w", err)
	}
	c := &Controller{cfg: cfg, build: build, log: provider.RedactingLogger(logger).With("controller", "dnsproviders"),
		entries: map[string]*entry{}}
	if c.dyn, err = dynamic.NewForConfig(rc); err != nil {
		return nil, fmt.Errorf("--dnsproviders: kubernetes client: %w", err)
	}
	if c.kc, err = kubernetes.NewForConfig(rc); err != nil {
		return nil, fmt.Errorf("--dnsproviders: kubernetes client: %w", err)
	}
	return c, nil
}

// Ready returns nil once the objects and Secrets are watched.
func (c *Controller) Ready() error {
	if !c.synced.Load() {
		return errors.New("dnsproviders: DNSProviders and Secrets not listed yet")
	}
	return nil
}

// Run watches the objects and their Secrets and runs their appliers until
// ctx ends; it then stops every one of them before it returns.
func (c *Controller) Run(ctx context.Context, js jetstream.JetStream) error {
	w := newWatch(c.dyn, c.kc, c.cfg.Namespaces)
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	// On the way out: no more keys, the one being handled finished (it may
	// start an applier), then every applier stopped.
	var worker sync.WaitGroup
	defer c.stopAll()
	defer worker.Wait()
	defer queue.ShutDown()
	objects := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueueObject(queue, obj) },
		UpdateFunc: func(_, obj any) { c.enqueueObject(queue, obj) },
		DeleteFunc: func(obj any) { c.enqueueObject(queue, obj) },
	}
	secrets := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueueUsers(queue, obj) },
		UpdateFunc: func(_, obj any) { c.enqueueUsers(queue, obj) },
		DeleteFunc: func(obj any) { c.enqueueUsers(queue, obj) },
	}
	if _, err := w.cluster.AddEventHandler(objects); err != nil {
		return err
	}
	for _, i := range w.providers {
		if _, err := i.AddEventHandler(objects); err != nil {
			return err
		}
	}
	for _, i := range w.secrets {
		if _, err := i.AddEventHandler(secrets); err != nil {
			return err
		}
	}
	if err := w.start(ctx); err != nil {
		return err
	}
	if err := c.sweep(ctx, js, w); err != nil {
		// Not fatal: the next start sweeps again.
		c.log.Warn("looking for the zone lists of declared providers that went", "err", err)
	}
	c.synced.Store(true)
	c.log.Info("watching DNSProviders and ClusterDNSProviders", "namespaces", c.cfg.Namespaces)

	worker.Go(func() {
		for {
			key, shut := queue.Get()
			if shut {
				return
			}
			if err := c.reconcile(ctx, js, w, key); err != nil && ctx.Err() == nil {
				c.log.Warn("declared provider: trying again", "provider", key, "err", err)
				queue.AddRateLimited(key)
			} else {
				queue.Forget(key)
			}
			queue.Done(key)
		}
	})
	ticker := time.NewTicker(c.cfg.StatusInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
			c.writeStatuses(ctx, queue)
		}
	}
}

// enqueueObject queues the bus name of a DNSProvider or ClusterDNSProvider.
func (c *Controller) enqueueObject(queue workqueue.TypedRateLimitingInterface[string], obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	type named interface {
		GetNamespace() string
		GetName() string
	}
	if o, ok := obj.(named); ok {
		queue.Add(o.GetNamespace() + "/" + o.GetName())
	}
}

// enqueueUsers queues every object whose credentials are in the Secret obj.
func (c *Controller) enqueueUsers(queue workqueue.TypedRateLimitingInterface[string], obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, e := range c.entries {
		if ns, name, ok := e.obj.secretRef(); ok && ns == s.Namespace && name == s.Name {
			queue.Add(key)
		}
	}
}

// stopAll stops every declared provider's applier, at once.
func (c *Controller) stopAll() {
	c.mu.Lock()
	entries := c.entries
	c.entries = map[string]*entry{}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, e := range entries {
		wg.Go(e.run.stop)
	}
	wg.Wait()
	providersGauge.Reset()
}
