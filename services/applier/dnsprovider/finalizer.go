package dnsprovider

import (
	"context"
	"encoding/json"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// setFinalizer adds (on) or removes Finalizer from o's finalizers, as a
// merge patch guarded by the object's resourceVersion (a stale view
// fails and is looked at again).
func (c *Controller) setFinalizer(ctx context.Context, o *Object, on bool) error {
	finalizers := slices.DeleteFunc(slices.Clone(o.Metadata.Finalizers), func(f string) bool { return f == Finalizer })
	if on {
		finalizers = append(finalizers, Finalizer)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers": finalizers, "resourceVersion": o.Metadata.ResourceVersion}})
	if err != nil {
		return err
	}
	_, err = c.resource(o).Patch(ctx, o.Metadata.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// retired says whether the retiring provider of key holds no name for us
// any more: listed since it began retiring, with nothing held. Only the
// replica leading it can tell.
func (c *Controller) retired(key string) bool {
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e == nil || !e.run.leading() {
		return false
	}
	a, version, _ := e.run.state()
	if a == nil || !retiringVersion(version) {
		return false
	}
	r := a.Report()
	return r.Listed && r.Problem == "" && r.Held == 0
}
