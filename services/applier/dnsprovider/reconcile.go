package dnsprovider

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"

	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// reconcile brings the applier of the object of bus name key in line with
// the object and its Secret: started, rebuilt when either changed,
// stopped when the object went.
func (c *Controller) reconcile(ctx context.Context, js jetstream.JetStream, w *watch, key string) error {
	u := w.object(key)
	if u == nil {
		return c.remove(ctx, js, key)
	}
	o, err := decode(u)
	if err != nil {
		o = &Object{}
		o.Metadata.Namespace, o.Metadata.Name, o.Metadata.Generation = u.GetNamespace(), u.GetName(), u.GetGeneration()
		return c.settle(ctx, js, key, o, "invalid", nil, refuse(ReasonInvalidSpec, provider.Redact(err.Error())))
	}
	held := slices.Contains(o.Metadata.Finalizers, Finalizer)
	retiring := false
	switch {
	case o.deleting() && !held:
		// Retain (or Delete, already done): its records stay.
		return c.remove(ctx, js, key)
	case o.deleting():
		retiring = true
		if c.retired(key) {
			if err := c.setFinalizer(ctx, o, false); err != nil {
				return err
			}
			return c.remove(ctx, js, key)
		}
	case o.policy() == Delete && !held:
		if err := c.setFinalizer(ctx, o, true); err != nil {
			return err
		}
	case o.policy() == Retain && held:
		if err := c.setFinalizer(ctx, o, false); err != nil {
			return err
		}
	}

	var secret *corev1.Secret
	secretVersion := "-"
	if ns, name, ok := o.secretRef(); ok && ns != "" {
		s, watched := w.secret(ns, name)
		if s == nil {
			why := "Secret " + ns + "/" + name + " not found"
			if !watched {
				why = "Secret " + ns + "/" + name + " is in a namespace this applier does not watch (--dnsprovider-namespace)"
			}
			return c.settle(ctx, js, key, o, fmt.Sprint(o.Metadata.Generation, "/missing/", retiring), nil, refuse(ReasonSecretNotFound, why))
		}
		secret, secretVersion = s, s.ResourceVersion
	}
	version := fmt.Sprint(o.Metadata.Generation, "/", secretVersion, "/", retiring)
	if c.current(key) == version {
		c.note(key, o)
		return nil
	}
	d, ref := declare(o, secret)
	if ref != nil {
		return c.settle(ctx, js, key, o, version, nil, ref)
	}
	a, ref := c.newApplier(ctx, key, o, d, retiring)
	return c.settle(ctx, js, key, o, version, a, ref)
}

// newApplier builds the provider d declares and its applier.
func (c *Controller) newApplier(ctx context.Context, key string, o *Object, d Declared, retiring bool) (*applier.Applier, *refusal) {
	logger := c.log.With("provider", key)
	d.Options = provider.Options{DefaultTTL: c.cfg.Applier.DefaultTTL, Logger: logger}
	var p provider.Provider
	var err error
	switch {
	case applier.NativeProvider(d.Provider):
		if p, err = applier.Build(d.Provider, d.Args, d.Options); err != nil {
			return nil, refuse(ReasonInvalidSpec, provider.Redact(err.Error()))
		}
	case c.build == nil:
		return nil, refuse(ReasonProviderNotAvailable, fmt.Sprintf("provider %q: this zonestream is built without ExternalDNS' providers (-tags externaldns)", d.Provider))
	default:
		if p, err = buildWithin(ctx, c.buildLimit(), c.build, d); err != nil {
			return nil, refuse(ReasonProviderNotAvailable, provider.Redact(err.Error()))
		}
	}
	cfg := c.cfg.Applier
	cfg.Name, cfg.Scope = "", o.scope(retiring)
	cfg.RateLimit, cfg.RateBurst = 0, 0
	if rl := o.Spec.RateLimit; rl != nil && rl.PerSecond > 0 {
		cfg.RateLimit, cfg.RateBurst = rl.PerSecond, max(rl.Burst, 1)
	}
	a, err := applier.NewWithProvider(cfg, key, p, c.log) // it names its provider itself
	if err != nil {
		return nil, refuse(ReasonInvalidSpec, provider.Redact(err.Error()))
	}
	return a, nil
}

// buildLimit is how long a provider may take to be built: as long as any
// one call to it may take (--provider-timeout).
func (c *Controller) buildLimit() time.Duration {
	if t := c.cfg.Applier.ProviderTimeout; t > 0 {
		return t
	}
	return applier.DefaultProviderTimeout
}

// current is the version the applier of key was built for.
func (c *Controller) current(key string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil {
		return e.version
	}
	return ""
}

// note keeps o as the newest object of key.
func (c *Controller) note(key string, o *Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[key]; e != nil {
		e.obj = o
	}
}

// settle makes a (nil: none, for ref) the applier of key, built for
// version, starting its campaign on first sight.
func (c *Controller) settle(ctx context.Context, js jetstream.JetStream, key string, o *Object, version string, a *applier.Applier, ref *refusal) error {
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e == nil {
		r, err := startRunning(ctx, js, key, c.cfg.Election, c.log.With("provider", key))
		if err != nil {
			return err
		}
		e = &entry{run: r}
		c.mu.Lock()
		c.entries[key] = e
		c.mu.Unlock()
		c.log.Info("declared provider found", "provider", key, "kind", o.Spec.Provider)
	} else if e.version != version {
		reason := restartReason(e.version, version)
		restartsTotal.WithLabelValues(key, reason).Inc()
		c.log.Info("declared provider changed: its applier starts again", "provider", key, "reason", reason)
	}
	c.mu.Lock()
	e.obj, e.version, e.refusal = o, version, ref
	c.mu.Unlock()
	if ref != nil {
		c.log.Warn("declared provider not run", "provider", key, "reason", ref.reason, "message", ref.message)
	}
	e.run.set(a, version)
	return nil
}

// restartReason says what changed between two versions (reconcile's
// "generation/secret/retiring"): spec, secret or retiring.
func restartReason(old, new string) string {
	o, n := strings.SplitN(old, "/", 3), strings.SplitN(new, "/", 3)
	switch {
	case len(o) != 3 || len(n) != 3 || o[0] != n[0]:
		return "spec"
	case o[1] != n[1]:
		return "secret"
	case o[2] != n[2]:
		return "retiring"
	}
	return "spec"
}
