package source

import (
	"fmt"

	"k8s.io/client-go/tools/cache"
)

// Served is a cache that may not be there yet: an informer of a resource
// the API server may not serve (a CRD not installed, or not synced).
type Served interface {
	Served() bool
	Indexer() cache.Indexer
}

// Lookup returns the object of key from c, or ErrUnknown while c is not
// served and synced: a missing CRD is never taken for deleted objects.
func Lookup[T any](c Served, key Key) (T, bool, error) {
	var zero T
	if c == nil || !c.Served() {
		return zero, false, ErrUnknown
	}
	obj, exists, err := c.Indexer().GetByKey(key.String())
	if err != nil || !exists {
		return zero, false, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, false, fmt.Errorf("unexpected object %T in the cache", obj)
	}
	return t, true, nil
}
