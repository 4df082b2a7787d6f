package source

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// annotationPrefixes are the prefixes annotations are read under, first
// wins: by default the alpha one, then the GA one (ExternalDNS v0.21 reads
// the first, v0.22 the second, and a Deployment moved over may carry
// either). --annotation-prefix replaces both with one, as ExternalDNS'
// SetAnnotationPrefix does, and --enable-legacy-annotation-prefix (v0.23)
// adds the alpha one after it: process-wide, since every informer's
// transform and every source read annotations through it, and a process
// runs one collector.
var annotationPrefixes atomic.Pointer[[]string]

func init() { _ = SetAnnotationPrefix("", false) }

// SetAnnotationPrefix makes prefix the only annotation prefix read, or,
// with legacy, the first before the alpha one; "" restores the default,
// both prefixes with the alpha one winning. The prefix must end with "/",
// and with legacy must not be under the alpha prefix, as ExternalDNS
// requires.
func SetAnnotationPrefix(prefix string, legacy bool) error {
	switch {
	case prefix == "":
		annotationPrefixes.Store(&[]string{AnnotationPrefixAlpha, AnnotationPrefix})
		return nil
	case !strings.HasSuffix(prefix, "/"):
		return errors.New("--annotation-prefix must end with '/'")
	case legacy && strings.HasPrefix(prefix, AnnotationPrefixAlpha):
		return fmt.Errorf("--enable-legacy-annotation-prefix cannot be used with --annotation-prefix %s, which starts with the legacy prefix", prefix)
	case legacy:
		annotationPrefixes.Store(&[]string{prefix, AnnotationPrefixAlpha})
	default:
		annotationPrefixes.Store(&[]string{prefix})
	}
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
