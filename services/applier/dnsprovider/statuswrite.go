package dnsprovider

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"

	"github.com/zonestream/zonestream/services/applier/provider"
)

// resource is the client of o's kind and namespace.
func (c *Controller) resource(o *Object) dynamic.ResourceInterface {
	if o.cluster() {
		return c.dyn.Resource(ClusterDNSProviders)
	}
	return c.dyn.Resource(DNSProviders).Namespace(o.Metadata.Namespace)
}

// retiringVersion says whether an applier was built for a retiring object.
func retiringVersion(version string) bool { return strings.HasSuffix(version, "/true") }

// writeStatuses writes the status of each object this replica leads the
// provider of, when it changed; it counts those by readiness (summed over
// the replicas, every object once), and looks again at the retiring ones
// (their finalizer goes once they hold nothing).
func (c *Controller) writeStatuses(ctx context.Context, queue workqueue.TypedRateLimitingInterface[string]) {
	c.mu.Lock()
	type item struct {
		key string
		e   entry
	}
	var items []item
	for key, e := range c.entries {
		items = append(items, item{key, *e})
	}
	c.mu.Unlock()
	all := make(map[string]*entry, len(items))
	for i := range items {
		all[items[i].key] = &items[i].e
	}
	found := conflicts(all)
	ready, notReady := 0, 0
	for _, it := range items {
		if it.e.obj.deleting() {
			queue.Add(it.key)
		}
		if !it.e.run.leading() {
			// Another replica runs it: it counts and writes it.
			continue
		}
		st := statusOf(&it.e, time.Now(), conflictCondition(found, it.key, it.e.obj.Metadata.Generation))
		if cond := st.ready(); cond != nil && cond.Status == "True" {
			ready++
		} else {
			notReady++
		}
		if sameStatus(&it.e.obj.Status, &st) {
			continue
		}
		if err := c.patchStatus(ctx, it.e.obj, st); err != nil && ctx.Err() == nil {
			c.log.Warn("writing the status of a declared provider failed", "provider", it.key, "err", err)
		}
	}
	providersGauge.WithLabelValues("true").Set(float64(ready))
	providersGauge.WithLabelValues("false").Set(float64(notReady))
}

// statusOf is what the status of e's object says now, its Conflict
// condition conflict: each condition's lastTransitionTime is kept while
// it keeps its value.
func statusOf(e *entry, now time.Time, conflict Condition) Status {
	o := e.obj
	st := Status{ObservedGeneration: o.Metadata.Generation, Quota: o.Spec.Quota}
	cond := Condition{Type: "Ready", Status: "False", ObservedGeneration: o.Metadata.Generation}
	a, version, _ := e.run.state()
	switch {
	case e.refusal != nil:
		cond.Reason, cond.Message = e.refusal.reason, e.refusal.message
	case a == nil:
		cond.Reason, cond.Message = ReasonStarting, "its applier is being built"
	default:
		r := a.Report()
		st.Zones, st.LastError, st.Records = r.Zones, r.LastError, r.Held
		switch {
		case retiringVersion(version):
			cond.Reason = ReasonRetiring
			cond.Message = fmt.Sprintf("deletionPolicy Delete: waiting until it holds no name for us (%d now); "+
				"the mass-delete guard may hold the deletes for approval (zonestream plans)", r.Held)
		case r.Problem != "":
			cond.Reason, cond.Message = ReasonListingFailed, "the provider could not be listed: "+r.Problem
		case !r.Listed:
			cond.Reason, cond.Message = ReasonStarting, "its applier has not listed the provider yet"
		default:
			cond.Status, cond.Reason = "True", ReasonReady
			cond.Message = fmt.Sprintf("%d zones listed", len(r.Zones))
		}
	}
	cond.Message = provider.Redact(cond.Message)
	st.Conditions = []Condition{transitioned(o.Status.condition("Ready"), cond, now), transitioned(o.Status.condition(ConditionConflict), conflict, now)}
	return st
}

// transitioned is c stamped with now, or with old's time while old says
// the same.
func transitioned(old *Condition, c Condition, now time.Time) Condition {
	c.LastTransitionTime = now.UTC().Format(time.RFC3339)
	if old != nil && old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	return c
}

// sameStatus says whether old says what st says.
func sameStatus(old, st *Status) bool {
	return reflect.DeepEqual(normalized(*old), normalized(*st))
}

func normalized(s Status) Status {
	s.Zones = slices.Clip(append([]string{}, s.Zones...))
	s.Conditions = slices.Clone(s.Conditions)
	if len(s.Conditions) == 0 {
		s.Conditions = nil
	}
	return s
}

// patchStatus writes st as o's status (status subresource).
func (c *Controller) patchStatus(ctx context.Context, o *Object, st Status) error {
	// A merge patch leaves out what it omits: what is now empty is null.
	orNull := func(empty bool, v any) any {
		if empty {
			return nil
		}
		return v
	}
	body, err := json.Marshal(map[string]any{"status": map[string]any{
		"conditions": st.Conditions, "zones": orNull(len(st.Zones) == 0, st.Zones),
		"lastError": orNull(st.LastError == "", st.LastError), "records": st.Records,
		"quota": orNull(st.Quota == 0, st.Quota), "observedGeneration": st.ObservedGeneration}})
	if err != nil {
		return err
	}
	_, err = c.resource(o).Patch(ctx, o.Metadata.Name, types.MergePatchType, body, metav1.PatchOptions{}, "status")
	return err
}
