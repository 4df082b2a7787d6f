package source

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// FromUnstructured reads what a source keeps of a custom resource it
// watches through a dynamic informer: its kind, its metadata (name,
// namespace, uid, resource version, labels, and the annotations Transform
// keeps, with keep), and its top-level fields (spec, status, ...) decoded
// into the small typed structs of into, by field name. A field present in
// another shape than expected (an absent one is fine) is returned as the
// error, to be reported on the object, the other fields still read: a
// transform that failed would stall the informer.
func FromUnstructured(u *unstructured.Unstructured, keep []string, into map[string]any) (metav1.TypeMeta, metav1.ObjectMeta, error) {
	tm := metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()}
	om := metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), UID: u.GetUID(),
		ResourceVersion: u.GetResourceVersion(), Labels: u.GetLabels(), Annotations: KeepAnnotations(u.GetAnnotations(), keep...)}
	var first error
	for field, dst := range into {
		v, present := u.Object[field]
		m, ok := v.(map[string]any)
		var err error
		switch {
		case !present || v == nil:
			continue
		case !ok:
			err = fmt.Errorf("%s is a %T, not an object", field, v)
		default:
			if err = runtime.DefaultUnstructuredConverter.FromUnstructured(m, dst); err != nil {
				err = fmt.Errorf("%s: %w", field, err)
			}
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return tm, om, first
}
