package collector

import (
	"context"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/kubestatus"
	"github.com/zonestream/zonestream/services/collector/source"
	crdsource "github.com/zonestream/zonestream/services/collector/source/crd"
)

// followsOutcomes: there is an outcome to bring back, an Event asked for or
// a DNSEndpoint's condition. Otherwise the desired, observed and result
// streams are not read at all.
func (r *run) followsOutcomes() bool {
	_, crd := r.sources[crdsource.Name]
	return r.c.cfg.KubeStatus && (len(r.c.cfg.EmitEvents) > 0 || crd)
}

// followOutcomes brings the pipeline's outcome back to this run's objects
// (Events, DNSEndpoint conditions) until ctx ends. It shares nothing with
// the publishing path: a failure here is counted and logged, never more.
func (r *run) followOutcomes(ctx context.Context) {
	logger := r.logger.With("part", "kube-status")
	var st *kubestatus.Status
	kube, err := kubestatus.NewKube(r.c.restConfig, r.c.client,
		func(o events.ObjectRef) *corev1.ObjectReference {
			return r.reference(item{source: o.Source, key: source.Key{Namespace: o.Namespace, Name: o.Name}})
		},
		func(o events.ObjectRef) map[string]kubestatus.Outcome { return st.Outcomes(o) }, logger, r.cachedObjects()...)
	if err != nil {
		logger.Error("object status disabled", "err", err)
		return
	}
	st = kubestatus.New(r.owns, func(o events.ObjectRef) bool { return o.Source == crdsource.Name },
		r.c.cfg.Ownership, kube, logger, kubestatus.WithCluster(r.c.cfg.ClusterName), kubestatus.WithEvents(r.c.cfg.EmitEvents...))
	var wg sync.WaitGroup
	wg.Go(func() { kube.Run(ctx) })
	st.Run(ctx, r.js)
	wg.Wait()
}

// cachedObjects has the condition writer read DNSEndpoints from the CRD
// source's cache.
func (r *run) cachedObjects() []kubestatus.KubeOption {
	crd, ok := r.sources[crdsource.Name].(*crdsource.Source)
	if !ok {
		return nil
	}
	return []kubestatus.KubeOption{kubestatus.WithCache(func(o events.ObjectRef) (*unstructured.Unstructured, bool) {
		if o.Source != crdsource.Name {
			return nil, false
		}
		return crd.Cached(source.Key{Namespace: o.Namespace, Name: o.Name})
	})}
}

// owns: the object is one this collector publishes (its cluster, one of
// its sources, its namespace).
func (r *run) owns(o events.ObjectRef) bool {
	if o.Cluster != r.c.cfg.ClusterName {
		return false
	}
	if _, ok := r.sources[o.Source]; !ok || slices.Contains(objectless, o.Source) {
		return false
	}
	ns := r.c.cfg.Namespace
	return ns == "" || o.Namespace == "" || o.Namespace == ns
}
