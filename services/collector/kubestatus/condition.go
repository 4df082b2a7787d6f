package kubestatus

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/zonestream/zonestream/events"
)

// ConditionReady is the condition type the collector owns on DNSEndpoints.
const ConditionReady = "Ready"

// maxMessage bounds a condition's message (the API allows 32768 bytes).
const maxMessage = 4096

// ReadyCondition is the Ready condition of an object at generation from
// the outcomes at its names.
func ReadyCondition(outcomes map[string]Outcome, generation int64) metav1.Condition {
	ready, reason, message := Summary(outcomes)
	status := metav1.ConditionFalse
	if ready {
		status = metav1.ConditionTrue
	}
	if len(message) > maxMessage {
		message = message[:maxMessage-3] + "..."
	}
	return metav1.Condition{Type: ConditionReady, Status: status, Reason: reason, Message: message,
		ObservedGeneration: generation}
}

// nextCondition brings one object's Ready condition up to date; false once
// the queue is shut down.
func (k *Kube) nextCondition(ctx context.Context) bool {
	obj, shutdown := k.conditions.Get()
	if shutdown {
		return false
	}
	defer k.conditions.Done(obj)
	if err := k.writeCondition(ctx, obj); err != nil && ctx.Err() == nil {
		if !apierrors.IsConflict(err) {
			k.failed("condition", obj, err)
		}
		k.conditions.AddRateLimited(obj)
		return true
	}
	k.conditions.Forget(obj)
	return true
}

// writeCondition reads the object, sets its Ready condition beside the
// ones others own, and updates the status subresource if it changed. It
// reads the object from the collector's cache when it is there, and from
// the API server when not, or when the cached copy was too old to update.
func (k *Kube) writeCondition(ctx context.Context, obj events.ObjectRef) error {
	if k.cached != nil {
		if u, ok := k.cached(obj); ok {
			err := k.updateCondition(ctx, obj, u.DeepCopy())
			if !apierrors.IsConflict(err) {
				return err
			}
		}
	}
	return k.updateCondition(ctx, obj, nil)
}

// updateCondition is writeCondition on u, or on the object read from the
// API server when u is nil.
func (k *Kube) updateCondition(ctx context.Context, obj events.ObjectRef, u *unstructured.Unstructured) error {
	outcomes := k.outcomes(obj)
	if len(outcomes) == 0 {
		return nil // nothing known, or every name gone with the object
	}
	ref := k.reference(obj)
	gvr, err := k.resource(ref)
	if err != nil {
		return err
	}
	client := k.dyn.Resource(gvr).Namespace(ref.Namespace)
	if u == nil {
		u, err = client.Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	conds, err := conditionsOf(u)
	if err != nil {
		return err
	}
	if !meta.SetStatusCondition(&conds, ReadyCondition(outcomes, u.GetGeneration())) {
		return nil
	}
	raw, err := toUnstructured(conds)
	if err != nil {
		return err
	}
	if err := unstructured.SetNestedSlice(u.Object, raw, "status", "conditions"); err != nil {
		return err
	}
	_, err = client.UpdateStatus(ctx, u, metav1.UpdateOptions{FieldManager: "zonestream-collector"})
	if err == nil {
		conditionWrites.Inc()
		c := meta.FindStatusCondition(conds, ConditionReady)
		k.logger.Debug("Ready condition set", "object", obj.Resource(), "status", c.Status, "reason", c.Reason)
	}
	return err
}

// conditionsOf reads status.conditions; a list that does not decode is
// an error, never silently replaced.
func conditionsOf(u *unstructured.Unstructured) ([]metav1.Condition, error) {
	raw, found, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil || !found {
		return nil, err
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var conds []metav1.Condition
	if err := json.Unmarshal(b, &conds); err != nil {
		return nil, fmt.Errorf("status.conditions: %w", err)
	}
	return conds, nil
}

func toUnstructured(conds []metav1.Condition) ([]any, error) {
	b, err := json.Marshal(conds)
	if err != nil {
		return nil, err
	}
	var out []any
	return out, json.Unmarshal(b, &out)
}
