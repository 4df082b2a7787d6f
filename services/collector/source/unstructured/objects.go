package unstructured

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strings"

	metaunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
)

// Source is the unstructured source: one state per object of every
// resource read.
type Source struct {
	opts      Options
	dynamic   dynamic.Interface
	resources []schema.GroupVersionResource
	templates templates
	// informers[i] reads resources[i].
	informers []*lazyinformer.Informer
	// resync is the collector's Runtime.Resync, set by Run before the
	// informers start.
	resync func()
}

var (
	_ source.Source = (*Source)(nil)
	_ source.Runner = (*Source)(nil)
)

// New validates the options and returns the source; it does no I/O.
func New(opts Options) (*Source, error) {
	resources, err := ParseResources(opts.Resources)
	if err != nil {
		return nil, err
	}
	if len(resources) == 0 {
		return nil, fmt.Errorf("%s source: no --unstructured-resource given", Name)
	}
	tmpl, err := parseTemplates(opts.FQDNTemplate, opts.Flags)
	if err != nil {
		return nil, err
	}
	dyn, err := opts.Dynamic(Name)
	if err != nil {
		return nil, err
	}
	return &Source{opts: opts, dynamic: dyn, resources: resources, templates: tmpl, resync: func() {}}, nil
}

// Name implements source.Source.
func (s *Source) Name() string { return Name }

// Register implements source.Source: an object's change enqueues it;
// nothing else feeds its endpoints.
func (s *Source) Register(_ informers.SharedInformerFactory, enqueue func(source.Key)) (cache.InformerSynced, error) {
	transform := s.transform()
	for _, gvr := range s.resources {
		handle := func(obj any) {
			if key, err := source.KeyOf(obj); err == nil {
				enqueue(keyOf(gvr, key.Namespace, key.Name))
			}
		}
		var inf *lazyinformer.Informer
		inf, err := lazyinformer.New(lazyinformer.Options{
			Discovery: s.opts.Client.Discovery(), Dynamic: s.dynamic, GroupVersion: gvr.GroupVersion(), Resource: gvr.Resource,
			Namespace: s.opts.Namespace, PollInterval: s.opts.PollInterval, Transform: transform,
			Handler: cache.ResourceEventHandlerFuncs{
				AddFunc: handle,
				UpdateFunc: func(old, cur any) {
					o, _ := old.(*metaunstructured.Unstructured)
					c, _ := cur.(*metaunstructured.Unstructured)
					if o != nil && c != nil && sameObject(o, c) {
						return
					}
					handle(cur)
				},
				DeleteFunc: handle,
			},
			OnSynced: func(context.Context) {
				inf.EnqueueAll(func(ns, name string) { enqueue(keyOf(gvr, ns, name)) })
				s.resync()
			},
			Logger: s.opts.Logger,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", Name, err)
		}
		s.informers = append(s.informers, inf)
	}
	return func() bool {
		for _, inf := range s.informers {
			if !inf.HasSynced() {
				return false
			}
		}
		return true
	}, nil
}

// Run implements source.Runner: it runs each resource's informer once
// the resource is served.
func (s *Source) Run(ctx context.Context, rt source.Runtime) {
	s.resync = rt.Resync
	done := make(chan struct{}, len(s.informers))
	for _, inf := range s.informers {
		go func() {
			defer func() { done <- struct{}{} }()
			inf.Run(ctx)
		}()
	}
	for range s.informers {
		<-done
	}
}

// Endpoints implements source.Source; source.ErrUnknown while the
// object's resource is not served and synced. A key of no resource read
// (one --unstructured-resource no longer names) does not exist.
func (s *Source) Endpoints(key source.Key) ([]events.Endpoint, bool, []error) {
	for i, gvr := range s.resources {
		objKey, ok := objectKey(gvr, key)
		if !ok {
			continue
		}
		u, exists, err := source.Lookup[*metaunstructured.Unstructured](s.informers[i], objKey)
		if err != nil {
			return nil, false, []error{err}
		}
		if !exists {
			return nil, false, nil
		}
		eps, problems := s.ObjectEndpoints(u)
		return eps, true, problems
	}
	return nil, false, nil
}

// Reference names the object of key for Events: its API version and kind
// as discovery found them, and its own name; ok is false for a key of no
// resource served.
func (s *Source) Reference(key source.Key) (apiVersion, kind, name string, ok bool) {
	for i, gvr := range s.resources {
		objKey, match := objectKey(gvr, key)
		if !match || i >= len(s.informers) {
			continue
		}
		k := s.informers[i].Kind()
		if k == "" {
			return "", "", "", false
		}
		return s.informers[i].Resource().GroupVersion().String(), k, objKey.Name, true
	}
	return "", "", "", false
}

// ObjectEndpoints computes the endpoints of one object, by ExternalDNS'
// rules: the hostname annotation's names at the target annotation's
// targets; then, when that gave nothing (or with
// --combine-fqdn-annotation, in addition), the --fqdn-target-template
// pairs; then likewise the --fqdn-template names at the
// --target-template targets. The ttl annotation applies to all.
func (s *Source) ObjectEndpoints(u *metaunstructured.Unstructured) ([]events.Endpoint, []error) {
	if !s.opts.Filters.Matches(u.GetLabels(), u.GetAnnotations()) || !source.Controlled(u.GetAnnotations()) {
		return nil, nil
	}
	in := source.NewInputs(u)
	ttl := in.TTL()
	var set source.EndpointSet
	targets := in.Targets()
	for _, h := range in.Hostnames(source.AnnotationHostname) {
		set.Add(h, targets...)
	}
	if s.templates.given() {
		v := viewOf(u)
		if s.opts.CombineFQDNAnnotation || set.Len() == 0 {
			s.addPairs(&set, in, v)
		}
		if s.opts.CombineFQDNAnnotation || set.Len() == 0 {
			s.addTemplated(&set, in, v)
		}
	}
	return set.Endpoints(ttl), in.Problems
}

// addPairs adds the "name:target" pairs of --fqdn-target-template. A pair
// with an empty side is skipped quietly, as in ExternalDNS: the status
// field it reads may not be written yet.
func (s *Source) addPairs(set *source.EndpointSet, in *source.Inputs, v view) {
	if s.templates.fqdnTarget == nil {
		return
	}
	const field = "--fqdn-target-template"
	for _, p := range run(s.templates.fqdnTarget, v, in, field, ReasonTargetTemplateFailed) {
		name, target, ok := strings.Cut(p, ":")
		if !ok {
			in.Problem(ReasonTargetTemplateFailed, field, fmt.Errorf("%q is not a name:target pair", p))
			continue
		}
		name, target = strings.TrimSuffix(strings.TrimSpace(name), "."), strings.TrimSuffix(strings.TrimSpace(target), ".")
		if name == "" || target == "" {
			continue
		}
		names := in.ValidHostnames([]string{name}, field, ReasonTargetTemplateFailed)
		if len(names) == 0 {
			continue
		}
		if err := source.ValidateTarget(target); err != nil {
			in.Problem(ReasonTargetTemplateFailed, field, err)
			continue
		}
		set.Add(names[0], target)
	}
}

// addTemplated adds the --fqdn-template names at the --target-template
// targets; without a target template they have no targets, hence no
// records, as in ExternalDNS.
func (s *Source) addTemplated(set *source.EndpointSet, in *source.Inputs, v view) {
	if s.templates.fqdn == nil || s.templates.target == nil {
		return
	}
	names := run(s.templates.fqdn, v, in, "--fqdn-template", source.ReasonFQDNTemplateFailed)
	names = in.ValidHostnames(names, "--fqdn-template", source.ReasonFQDNTemplateFailed)
	if len(names) == 0 {
		return
	}
	const field = "--target-template"
	var targets []string
	for _, t := range run(s.templates.target, v, in, field, ReasonTargetTemplateFailed) {
		if err := source.ValidateTarget(t); err != nil {
			in.Problem(ReasonTargetTemplateFailed, field, err)
			continue
		}
		targets = append(targets, t)
	}
	for _, n := range names {
		set.Add(n, targets...)
	}
}

// transform is the informers' transform. Without templates only the
// metadata is read, so only the metadata is kept, its annotations
// trimmed to the external-dns ones and those the annotation filter
// reads; with templates the whole object is kept, all its annotations
// too, as a template may read any of them.
func (s *Source) transform() cache.TransformFunc {
	keep := s.opts.Filters.AnnotationKeys()
	whole := s.templates.given()
	return func(obj any) (any, error) {
		u, ok := obj.(*metaunstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		u.SetManagedFields(nil)
		ann := u.GetAnnotations()
		if whole {
			delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
			u.SetAnnotations(ann)
			return u, nil
		}
		trimmed := &metaunstructured.Unstructured{Object: map[string]any{
			"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": u.Object["metadata"]}}
		trimmed.SetAnnotations(source.KeepAnnotations(ann, keep...))
		return trimmed, nil
	}
}

// sameObject reports whether two versions of an object want the same
// endpoints: same labels and annotations and, when templates read the
// rest, same everything but the metadata's bookkeeping.
func sameObject(a, b *metaunstructured.Unstructured) bool {
	if !maps.Equal(a.GetLabels(), b.GetLabels()) || !maps.Equal(a.GetAnnotations(), b.GetAnnotations()) {
		return false
	}
	for k, v := range a.Object {
		if k != "metadata" && !reflect.DeepEqual(v, b.Object[k]) {
			return false
		}
	}
	for k := range b.Object {
		if _, ok := a.Object[k]; !ok && k != "metadata" {
			return false
		}
	}
	return true
}
