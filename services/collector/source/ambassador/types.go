package ambassador

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/zonestream/zonestream/services/collector/source"
)

// Host is what the source keeps of a getambassador.io Host: the informer
// turns every object into one, so the cache stays small and events can
// name the object.
type Host struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              HostSpec `json:"spec"`
	// invalid is why the spec could not be read, reported on the Host.
	invalid error
}

// HostSpec holds the one field the source reads.
type HostSpec struct {
	Hostname string `json:"hostname,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (h *Host) DeepCopyObject() runtime.Object {
	c := *h
	c.ObjectMeta = *h.ObjectMeta.DeepCopy()
	return &c
}

// transformHost is the Host informer's transform: it keeps the metadata
// (the annotations under an external-dns prefix and those of keep) and
// spec.hostname. A spec that cannot be read is kept as invalid (to be
// reported), never returned as an error, which would stall the informer.
func transformHost(keep []string) func(any) (any, error) {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		h := &Host{
			TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
			ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
				ResourceVersion: u.GetResourceVersion(), Labels: u.GetLabels(),
				Annotations: source.KeepAnnotations(u.GetAnnotations(), keep...)},
		}
		if spec, ok := u.Object["spec"].(map[string]any); ok {
			h.invalid = runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &h.Spec)
		}
		return h, nil
	}
}

// sameHost reports whether two versions of a Host are the same to the
// source.
func sameHost(a, b *Host) bool {
	return maps.Equal(a.Labels, b.Labels) && maps.Equal(a.Annotations, b.Annotations) &&
		a.Spec == b.Spec && (a.invalid == nil) == (b.invalid == nil)
}
