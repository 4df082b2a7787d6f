package dnsprovider

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/zonestream/zonestream/events"
)

// The resources the controller watches (deploy/crds).
var (
	DNSProviders        = schema.GroupVersionResource{Group: "zonestream.io", Version: "v1alpha1", Resource: "dnsproviders"}
	ClusterDNSProviders = schema.GroupVersionResource{Group: "zonestream.io", Version: "v1alpha1", Resource: "clusterdnsproviders"}
)

// Finalizer holds an object of deletionPolicy Delete until its provider
// holds no name for us.
const Finalizer = "zonestream.io/records"

// Deletion policies.
const (
	Retain = "Retain"
	Delete = "Delete"
)

// Object is a DNSProvider or a ClusterDNSProvider (Namespace ""), decoded.
type Object struct {
	Metadata struct {
		Name              string   `json:"name"`
		Namespace         string   `json:"namespace"`
		Generation        int64    `json:"generation"`
		ResourceVersion   string   `json:"resourceVersion"`
		DeletionTimestamp *string  `json:"deletionTimestamp"`
		Finalizers        []string `json:"finalizers"`
	} `json:"metadata"`
	Spec   Spec   `json:"spec"`
	Status Status `json:"status"`
}

// Spec is the agreed shape of both kinds' spec.
type Spec struct {
	Provider    string            `json:"provider"`
	Settings    map[string]string `json:"settings"`
	Credentials struct {
		SecretRef *SecretRef `json:"secretRef"`
	} `json:"credentials"`
	Domains struct {
		Include []string `json:"include"`
		Exclude []string `json:"exclude"`
	} `json:"domains"`
	Namespaces []string `json:"namespaces"`
	Quota      int      `json:"quota"`
	RateLimit  *struct {
		PerSecond float64 `json:"perSecond"`
		Burst     int     `json:"burst"`
	} `json:"rateLimit"`
	DeletionPolicy string `json:"deletionPolicy"`
}

// SecretRef names the Secret holding a provider's credentials.
type SecretRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// key is the object's bus name, events.DeclaredProvider: its key in the
// controller too.
func (o *Object) key() string { return events.DeclaredProvider(o.Metadata.Namespace, o.Metadata.Name) }

// cluster says whether it is a ClusterDNSProvider.
func (o *Object) cluster() bool { return o.Metadata.Namespace == "" }

// deleting says whether the object is being deleted.
func (o *Object) deleting() bool { return o.Metadata.DeletionTimestamp != nil }

// policy is its deletionPolicy, Retain by default.
func (o *Object) policy() string {
	if o.Spec.DeletionPolicy == Delete {
		return Delete
	}
	return Retain
}

// secretRef is where its Secret is (namespace, name); ok false when it
// names none.
func (o *Object) secretRef() (namespace, name string, ok bool) {
	ref := o.Spec.Credentials.SecretRef
	if ref == nil || ref.Name == "" {
		return "", "", false
	}
	if o.cluster() {
		return ref.Namespace, ref.Name, true
	}
	return o.Metadata.Namespace, ref.Name, true
}

// scope is what its applier publishes with its zone list.
func (o *Object) scope(retiring bool) *events.ProviderScope {
	namespaces := o.Spec.Namespaces
	switch {
	case len(namespaces) > 0:
	case o.cluster():
		namespaces = []string{events.AllNamespaces}
	default:
		namespaces = []string{o.Metadata.Namespace}
	}
	return &events.ProviderScope{Declared: o.key(), Domains: append([]string(nil), o.Spec.Domains.Include...),
		Exclude: append([]string(nil), o.Spec.Domains.Exclude...), Namespaces: append([]string(nil), namespaces...),
		Quota: o.Spec.Quota, Retiring: retiring}
}
