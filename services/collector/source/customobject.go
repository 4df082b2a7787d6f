package source

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// FromUnstructured reads what a source keeps of a custom resource it
// watches through a dynamic informer: its kind, its metadata (name,
// namespace, uid, resource version, labels, and the annotations Transform
// keeps, with keep), and its top-level fields (spec, status, ...) decoded
// into the small typed structs of into, by field name. A field that does
// not have the expected shape is returned as the error, to be reported on
// the object: a transform that failed would stall the informer.
func FromUnstructured(u *unstructured.Unstructured, keep []string, into map[string]any) (metav1.TypeMeta, metav1.ObjectMeta, error) {
	tm := metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()}
	om := metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
		ResourceVersion: u.GetResourceVersion(), Labels: u.GetLabels(), Annotations: KeepAnnotations(u.GetAnnotations(), keep...)}
	var first error
	for field, dst := range into {
		m, ok := u.Object[field].(map[string]any)
		if !ok {
			continue
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, dst); err != nil && first == nil {
			first = err
		}
	}
	return tm, om, first
}
