package istio

import (
	"fmt"

	"github.com/zonestream/zonestream/services/collector/source"
	"github.com/zonestream/zonestream/services/collector/source/lazyinformer"
)

// getObject returns the object of key from a lazy informer's cache, or
// source.ErrUnknown while the informer is not served and synced: a
// missing CRD is never taken for deleted objects.
func getObject[T any](inf *lazyinformer.Informer, key source.Key) (T, bool, error) {
	var zero T
	if inf == nil || !inf.Served() {
		return zero, false, source.ErrUnknown
	}
	obj, exists, err := inf.Indexer().GetByKey(key.String())
	if err != nil || !exists {
		return zero, false, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, false, fmt.Errorf("unexpected object %T in the cache", obj)
	}
	return t, true, nil
}

func errs(err error) []error {
	if err == nil {
		return nil
	}
	return []error{err}
}
