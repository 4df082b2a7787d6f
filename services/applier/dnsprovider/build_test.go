package dnsprovider

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/services/applier/provider"
)

// A builder that hangs and ignores its context is abandoned at the
// deadline with a clear error; one that ends returns what it built.
func TestBuildWithinAbandonsAHangingBuild(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	hangs := func(context.Context, Declared) (provider.Provider, error) { <-release; return nil, nil }
	_, err := buildWithin(context.Background(), 50*time.Millisecond, hangs, Declared{Provider: "oci"})
	if err == nil || !strings.Contains(err.Error(), "oci did not end within 50ms") {
		t.Fatalf("a hanging build: %v", err)
	}
	refused := errors.New("refused")
	fails := func(context.Context, Declared) (provider.Provider, error) { return nil, refused }
	if _, err := buildWithin(context.Background(), time.Minute, fails, Declared{Provider: "aws"}); !errors.Is(err, refused) {
		t.Fatalf("a failing build: %v", err)
	}
}
