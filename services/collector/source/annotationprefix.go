package source

import (
	"errors"
	"strings"
	"sync/atomic"
)

// annotationPrefixes are the prefixes annotations are read under, first
// wins: by default the alpha one, then the GA one (ExternalDNS v0.21 reads
// the first, v0.22 the second, and a Deployment moved over may carry
// either). --annotation-prefix replaces both with one, as ExternalDNS'
// SetAnnotationPrefix does: process-wide, since every informer's transform
// and every source read annotations through it, and a process runs one
// collector.
var annotationPrefixes atomic.Pointer[[]string]

func init() { SetAnnotationPrefix("") }

// SetAnnotationPrefix makes prefix the only annotation prefix read; ""
// restores the default, both prefixes with the alpha one winning. The
// prefix must end with "/", as ExternalDNS requires.
func SetAnnotationPrefix(prefix string) error {
	if prefix == "" {
		annotationPrefixes.Store(&[]string{AnnotationPrefixAlpha, AnnotationPrefix})
		return nil
	}
	if !strings.HasSuffix(prefix, "/") {
		return errors.New("--annotation-prefix must end with '/'")
	}
	annotationPrefixes.Store(&[]string{prefix})
	return nil
}

// AnnotationPrefixes are the prefixes read, the one that wins first.
func AnnotationPrefixes() []string { return *annotationPrefixes.Load() }

// hasAnnotationPrefix reports whether key is under a prefix read.
func hasAnnotationPrefix(key string) bool {
	for _, p := range AnnotationPrefixes() {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}
