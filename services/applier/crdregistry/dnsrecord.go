package crdregistry

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/zonestream/zonestream/events"
)

// ExternalDNS' DNSRecord API (apis/v1alpha1/dnsrecord.go, v0.23), which
// must keep working both ways.
const (
	// OwnerLabel is the object label naming the owner (--txt-owner-id).
	OwnerLabel = "externaldns.k8s.io/owner"
	// ReadyCondition is the status condition saying whether the record is
	// live in the provider; only Ready records count as owned.
	ReadyCondition = "Ready"
	// The Ready condition's reasons.
	ReasonAccepted   = "Accepted"   // written, provider not called yet (Ready=False)
	ReasonProgrammed = "Programmed" // applied by the provider (Ready=True)
	ReasonFailed     = "Failed"     // the provider refused the batch (Ready=False)

	// The endpoint labels ExternalDNS stamps (endpoint.OwnerLabelKey,
	// endpoint.ResourceLabelKey).
	endpointOwnerLabel    = "owner"
	endpointResourceLabel = "resource"
)

// Resource is the DNSRecord resource.
var Resource = schema.GroupVersionResource{Group: "externaldns.k8s.io", Version: "v1alpha1", Resource: "dnsrecords"}

// DNSRecord is one record set ExternalDNS (or zonestream) owns: the whole
// endpoint, and whether the provider holds it.
type DNSRecord struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              DNSRecordSpec   `json:"spec,omitempty"`
	Status            DNSRecordStatus `json:"status,omitempty"`
}

// DNSRecordSpec holds the endpoint in ExternalDNS' JSON, which
// events.Endpoint shares field for field.
type DNSRecordSpec struct {
	Endpoint events.Endpoint `json:"endpoint"`
}

// DNSRecordStatus carries the Ready condition.
type DNSRecordStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Ready reports whether the provider holds the record as written.
func (r *DNSRecord) Ready() bool {
	for _, c := range r.Status.Conditions {
		if c.Type == ReadyCondition {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}

// Owner is the owner label.
func (r *DNSRecord) Owner() string { return r.Labels[OwnerLabel] }

func fromUnstructured(u *unstructured.Unstructured) (*DNSRecord, error) {
	var r DNSRecord
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &r); err != nil {
		return nil, fmt.Errorf("DNSRecord %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return &r, nil
}

func (r *DNSRecord) toUnstructured() (*unstructured.Unstructured, error) {
	r.APIVersion, r.Kind = Resource.GroupVersion().String(), "DNSRecord"
	if r.Spec.Endpoint.Targets == nil {
		r.Spec.Endpoint.Targets = []string{} // the schema wants a list
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(r)
	if err != nil {
		return nil, fmt.Errorf("DNSRecord %s/%s: %w", r.Namespace, r.Name, err)
	}
	return &unstructured.Unstructured{Object: obj}, nil
}
