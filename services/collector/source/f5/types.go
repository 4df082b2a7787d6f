package f5

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/zonestream/zonestream/services/collector/source"
)

// Server is what the sources keep of a VirtualServer or a
// TransportServer: the fields both kinds share that the rules read (a
// TransportServer has no hostAliases). The informers turn every object
// into one, so the caches stay small and events can name the object.
type Server struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              ServerSpec   `json:"spec"`
	Status            ServerStatus `json:"status"`
	// invalid is why the spec or status could not be read, reported on
	// the object.
	invalid error
}

// ServerSpec holds the names and the address asked for.
type ServerSpec struct {
	Host                 string   `json:"host,omitempty"`
	HostAliases          []string `json:"hostAliases,omitempty"`
	VirtualServerAddress string   `json:"virtualServerAddress,omitempty"`
}

// ServerStatus holds the address BIG-IP serves the object on ("None"
// while it has none).
type ServerStatus struct {
	VSAddress string `json:"vsAddress,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (s *Server) DeepCopyObject() runtime.Object {
	c := *s
	c.ObjectMeta = *s.ObjectMeta.DeepCopy()
	c.Spec.HostAliases = slices.Clone(s.Spec.HostAliases)
	return &c
}

// transformServer is the informers' transform: it keeps the metadata
// (the annotations under an external-dns prefix and those of keep) and
// the fields of Server. A spec or status that cannot be read is kept as
// invalid (to be reported), never returned as an error, which would
// stall the informer.
func transformServer(keep []string) func(any) (any, error) {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		s := &Server{
			TypeMeta: metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()},
			ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
				ResourceVersion: u.GetResourceVersion(), Labels: u.GetLabels(),
				Annotations: source.KeepAnnotations(u.GetAnnotations(), keep...)},
		}
		if spec, ok := u.Object["spec"].(map[string]any); ok {
			s.invalid = runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &s.Spec)
		}
		if status, ok := u.Object["status"].(map[string]any); ok && s.invalid == nil {
			s.invalid = runtime.DefaultUnstructuredConverter.FromUnstructured(status, &s.Status)
		}
		return s, nil
	}
}

// sameServer reports whether two versions of an object are the same to
// the sources (status.status and lastUpdated change without a new
// address).
func sameServer(a, b *Server) bool {
	return maps.Equal(a.Annotations, b.Annotations) && a.Spec.Host == b.Spec.Host &&
		slices.Equal(a.Spec.HostAliases, b.Spec.HostAliases) &&
		a.Spec.VirtualServerAddress == b.Spec.VirtualServerAddress && a.Status == b.Status &&
		(a.invalid == nil) == (b.invalid == nil)
}
