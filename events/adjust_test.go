package events

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// The planner's adjust request reaches the provider's applier and comes
// back adjusted; no applier, a failing provider and a garbage request are
// each ErrAdjust or an answered error, never records.
func TestAdjustRequestAndAnswer(t *testing.T) {
	nc := startJetStream(t).Conn()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in := []Endpoint{{DNSName: "shop.example.org", RecordType: RecordTypeCNAME, Targets: []string{"lb.elb.example"}}}

	if _, err := Adjust(ctx, nc, "aws", in); !errors.Is(err, ErrAdjust) {
		t.Fatalf("no applier: %v, want ErrAdjust", err)
	}

	stop, err := ServeAdjust(nc, "aws", time.Second, func(_ context.Context, eps []Endpoint) ([]Endpoint, error) {
		out := make([]Endpoint, 0, 2*len(eps))
		for _, e := range eps {
			e.RecordType = RecordTypeA
			e.ProviderSpecific = []ProviderSpecificProperty{{Name: "alias", Value: "true"}}
			aaaa := e
			aaaa.RecordType = RecordTypeAAAA
			out = append(out, e, aaaa)
		}
		return out, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Adjust(ctx, nc, "aws", in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].RecordType != RecordTypeA || got[1].RecordType != RecordTypeAAAA || got[0].ProviderSpecific[0].Name != "alias" {
		t.Fatalf("adjusted %+v", got)
	}
	// A request for another provider is not this applier's.
	if _, err := Adjust(ctx, nc, "google", in); !errors.Is(err, ErrAdjust) {
		t.Fatalf("another provider: %v, want ErrAdjust", err)
	}
	stop()

	if _, err = ServeAdjust(nc, "aws", time.Second, func(context.Context, []Endpoint) ([]Endpoint, error) {
		return nil, errors.New("throttled")
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := Adjust(ctx, nc, "aws", in); !errors.Is(err, ErrAdjust) || !strings.Contains(err.Error(), "throttled") {
		t.Fatalf("failing provider: %v", err)
	}
	// Garbage on the subject is answered with an error, not a crash.
	answer, err := nc.RequestMsgWithContext(ctx, &nats.Msg{Subject: AdjustSubject("aws"), Data: []byte{0xc1, 0xff}})
	if err != nil {
		t.Fatal(err)
	}
	var r AdjustReply
	if err := Unmarshal(answer.Header, answer.Data, &r); err != nil || r.Error == "" || len(r.Endpoints) != 0 {
		t.Fatalf("garbage answered %+v %v", r, err)
	}
}
