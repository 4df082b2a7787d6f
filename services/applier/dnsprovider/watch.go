package dnsprovider

import (
	"context"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// watch holds the informers: DNSProviders and Secrets of each watched
// namespace ("" : every one, one informer each cluster-wide), and the
// ClusterDNSProviders. The Secret informers hold every Secret of the
// namespaces they watch (Secrets carry no label to select ours by).
type watch struct {
	providers map[string]cache.SharedIndexInformer // by namespace, "" for all
	cluster   cache.SharedIndexInformer
	secrets   map[string]cache.SharedIndexInformer
	starts    []func(<-chan struct{})
}

func newWatch(dyn dynamic.Interface, kc kubernetes.Interface, namespaces []string) *watch {
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	w := &watch{providers: map[string]cache.SharedIndexInformer{}, secrets: map[string]cache.SharedIndexInformer{}}
	for _, ns := range namespaces {
		df := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, ns, nil)
		w.providers[ns] = df.ForResource(DNSProviders).Informer()
		kf := informers.NewSharedInformerFactoryWithOptions(kc, 0, informers.WithNamespace(ns))
		secrets := kf.Core().V1().Secrets().Informer()
		// Kept: the data and what names a Secret. Dropped: its managed
		// fields and annotations (kubectl's last-applied copy of the data
		// among them), which no one here reads.
		_ = secrets.SetTransform(trimSecret)
		w.secrets[ns] = secrets
		w.starts = append(w.starts, df.Start, kf.Start)
	}
	cf := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	w.cluster = cf.ForResource(ClusterDNSProviders).Informer()
	w.starts = append(w.starts, cf.Start)
	return w
}

// informers are every informer of w.
func (w *watch) informers() []cache.SharedIndexInformer {
	out := []cache.SharedIndexInformer{w.cluster}
	for _, i := range w.providers {
		out = append(out, i)
	}
	for _, i := range w.secrets {
		out = append(out, i)
	}
	return out
}

// start starts the informers and waits for their caches.
func (w *watch) start(ctx context.Context) error {
	for _, s := range w.starts {
		s(ctx.Done())
	}
	var synced []cache.InformerSynced
	for _, i := range w.informers() {
		synced = append(synced, i.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return errors.New("dnsproviders: informers did not sync")
	}
	return nil
}

// informerOf is the informer of the watched namespace ns, nil when it is not watched.
func informerOf(m map[string]cache.SharedIndexInformer, ns string) cache.SharedIndexInformer {
	if i, ok := m[""]; ok {
		return i
	}
	return m[ns]
}

// object is the object of bus name key (events.DeclaredProvider), nil
// when there is none.
func (w *watch) object(key string) *unstructured.Unstructured {
	ns, name, _ := cutKey(key)
	inf := w.cluster
	storeKey := name
	if ns != "" {
		inf, storeKey = informerOf(w.providers, ns), ns+"/"+name
	}
	if inf == nil {
		return nil
	}
	obj, ok, err := inf.GetStore().GetByKey(storeKey)
	if err != nil || !ok {
		return nil
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u
}

// secret is the Secret ns/name; watched false when ns is not watched.
func (w *watch) secret(ns, name string) (s *corev1.Secret, watched bool) {
	inf := informerOf(w.secrets, ns)
	if inf == nil {
		return nil, false
	}
	obj, ok, err := inf.GetStore().GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil, true
	}
	s, _ = obj.(*corev1.Secret)
	return s, true
}

// cutKey splits a bus name (events.DeclaredProvider) into namespace and name.
func cutKey(key string) (ns, name string, ok bool) { return strings.Cut(key, "/") }

// trimSecret is what the Secret informers keep of a Secret.
func trimSecret(obj any) (any, error) {
	if s, ok := obj.(*corev1.Secret); ok {
		s.ManagedFields, s.Annotations = nil, nil
	}
	return obj, nil
}
