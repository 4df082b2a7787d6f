package source

import (
	"maps"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A custom object becomes what a source keeps: its kind, identity,
// labels and only the annotations sources read; its fields decoded by
// name, a field of the wrong shape returned as the error while the rest
// is still read.
func TestFromUnstructured(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.org/v1", "kind": "Thing",
		"metadata": map[string]any{"name": "t", "namespace": "ns", "uid": "u-1", "resourceVersion": "7",
			"labels": map[string]any{"app": "web"},
			"annotations": map[string]any{AnnotationPrefixAlpha + "hostname": "a.example.org", "team": "dns",
				"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
		"spec":   map[string]any{"host": "a.example.org", "port": int64(80)},
		"status": map[string]any{"ready": "not a bool"},
	}}
	var spec struct {
		Host string `json:"host"`
		Port int    `json:"port"`
	}
	var status struct {
		Ready bool `json:"ready"`
	}
	tm, om, err := FromUnstructured(u, []string{"team"}, map[string]any{"spec": &spec, "status": &status})
	if tm.APIVersion != "example.org/v1" || tm.Kind != "Thing" {
		t.Errorf("type %v", tm)
	}
	if om.Name != "t" || om.Namespace != "ns" || om.UID != "u-1" || om.ResourceVersion != "7" || om.Labels["app"] != "web" {
		t.Errorf("metadata %+v", om)
	}
	if want := map[string]string{AnnotationPrefixAlpha + "hostname": "a.example.org", "team": "dns"}; !maps.Equal(om.Annotations, want) {
		t.Errorf("annotations %v, want %v", om.Annotations, want)
	}
	if spec.Host != "a.example.org" || spec.Port != 80 {
		t.Errorf("spec %+v", spec)
	}
	if err == nil {
		t.Errorf("a status of the wrong shape gave no error")
	}

	var none struct{}
	if _, _, err := FromUnstructured(&unstructured.Unstructured{Object: map[string]any{"spec": "a string"}}, nil,
		map[string]any{"spec": &none}); err == nil {
		t.Errorf("a spec that is not an object gave no error")
	}
	if _, _, err := FromUnstructured(&unstructured.Unstructured{Object: map[string]any{}}, nil,
		map[string]any{"spec": &none, "status": &none}); err != nil {
		t.Errorf("absent fields gave %v", err)
	}
}
