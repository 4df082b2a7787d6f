package externaldns

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/plan"
	edprovider "sigs.k8s.io/external-dns/provider"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/webhook"
)

// stuck is an ExternalDNS provider whose ApplyChanges hangs (a throttled
// cloud API) until its context ends, or 10 s pass.
type stuck struct {
	edprovider.BaseProvider
	ended chan bool
}

func (s *stuck) Records(context.Context) ([]*endpoint.Endpoint, error) { return nil, nil }

func (s *stuck) ApplyChanges(ctx context.Context, _ *plan.Changes) error {
	select {
	case <-ctx.Done():
		s.ended <- true
		return ctx.Err()
	case <-time.After(10 * time.Second):
		s.ended <- false
		return errors.New("never cancelled")
	}
}

// The provider runs under the applier's context: when the apply's context
// ends, the provider's call ends with it (ExternalDNS' own webhook server
// would run it under context.Background()), and the failure is transient.
func TestProviderRunsUnderTheApplierContext(t *testing.T) {
	s := &stuck{ended: make(chan bool, 1)}
	h := newHandler(s, endpoint.NewDomainFilter([]string{"example.org"}), false, slog.Default())
	p, err := webhook.New(webhook.Config{URL: inProcessURL, Retries: -1}, provider.Options{}, webhook.WithTransport(inProcess{h}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	e := events.NewEndpoint("www.example.org", "A", 0, "192.0.2.1")
	err = provider.Checked(p).Apply(ctx, "example.org", []events.Change{{New: &e}})
	if err == nil || errors.Is(err, provider.ErrPermanent) || errors.Is(err, provider.ErrStale) {
		t.Fatalf("apply: %v, want a transient error", err)
	}
	if !<-s.ended {
		t.Fatal("the provider's call did not end with the apply's context")
	}
}
