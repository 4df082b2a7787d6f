package applier_test

import (
	"context"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
)

// TestExpiredPlanIsNeverApplied: a plan that reaches the applier after its
// NotAfter (the planner has given up on it and planned the zone again) is
// dropped unapplied and reported expired; a plan still valid is applied.
func TestExpiredPlanIsNeverApplied(t *testing.T) {
	js := bus(t)
	cfg := applier.Config{Provider: inmemory.Name, Interval: time.Hour, DefaultTTL: 300}
	cfg.InMemory.Zones = []string{zone}
	r := start(t, js, cfg)
	ctx := context.Background()
	queue := func(id string, notAfter time.Time, c events.Change) {
		t.Helper()
		if _, _, err := events.Publish(ctx, js, events.PlanSubject("inmemory", zone), &events.Plan{ID: id, Provider: "inmemory",
			Zone: zone, Changes: []events.Change{c}, NotAfterMillis: notAfter.UnixMilli()}, ""); err != nil {
			t.Fatal(err)
		}
	}

	queue("late", time.Now().Add(-time.Second), events.Change{New: ep("late.example.org", "A", "192.0.2.1")})
	res, _ := waitResultOf(t, js, "inmemory", "late")
	if res.Status != events.ResultExpired || res.Applied != 0 {
		t.Fatalf("late plan: %+v, want expired and nothing applied", res)
	}
	queue("valid", time.Now().Add(time.Minute), events.Change{New: ep("valid.example.org", "A", "192.0.2.2")})
	if res, _ := waitResultOf(t, js, "inmemory", "valid"); res.Status != events.ResultApplied {
		t.Fatalf("valid plan: %+v", res)
	}
	recs, err := r.a.Provider().Records(ctx, zone)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.DNSName == "late.example.org" {
			t.Fatalf("the expired plan was applied: %+v", rec)
		}
	}
}
