package planner

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events/registry"
)

// TestRecordWhoseOwnershipCannotBeWrittenIsRefused: a valid 60-octet
// label gets an AAAA ownership record "aaaa-<label>" of 65 octets, which
// DNS does not allow: the AAAA is refused before anything is written
// (counted, logged), while the A at the same name ("a-<label>", 62) is
// planned with its ownership as usual.
func TestRecordWhoseOwnershipCannotBeWrittenIsRefused(t *testing.T) {
	nc, js := startBus(t)
	label := strings.Repeat("x", 60)
	name := label + "." + zone
	zones(t, js, zone)
	before := testutil.ToFloat64(refused.WithLabelValues(refusedName))
	sub := planSub(t, nc)
	runPlanner(t, js, Config{})
	wanted(t, js, rr(name, "A", 0, "192.0.2.1"), rr(name, "AAAA", 0, "2001:db8::1"))

	got := planLines(nextPlan(t, sub))
	want := []string{"create A " + label + " 192.0.2.1", "create TXT a-" + label + " " + owned("me", "service/default/web")}
	if !slices.Equal(got, want) {
		t.Fatalf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if after := testutil.ToFloat64(refused.WithLabelValues(refusedName)); after <= before {
		t.Fatal("the refusal was not counted")
	}
}

// TestCRDModeOwnershipNamesAreNotRefused: with --registry=crd ownership
// records never reach DNS, so a record whose ownership name DNS could not
// carry (aaaa- and a 60-octet label) is planned with its ownership, as
// ExternalDNS' CRD registry manages it.
func TestCRDModeOwnershipNamesAreNotRefused(t *testing.T) {
	nc, js := startBus(t)
	label := strings.Repeat("x", 60)
	name := label + "." + zone
	zones(t, js, zone)
	sub := planSub(t, nc)
	runPlanner(t, js, Config{Registry: RegistryCRD, Ownership: registry.Settings{Prefix: "ignored-"}})
	wanted(t, js, rr(name, "A", 0, "192.0.2.1"), rr(name, "AAAA", 0, "2001:db8::1"))

	got := planLines(nextPlan(t, sub))
	want := []string{"create A " + label + " 192.0.2.1", "create AAAA " + label + " 2001:db8::1",
		"create TXT a-" + label + " " + owned("me", "service/default/web"), "create TXT aaaa-" + label + " " + owned("me", "service/default/web")}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
