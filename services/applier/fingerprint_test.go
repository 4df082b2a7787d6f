package applier

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
	"github.com/zonestream/zonestream/testenv/natsenv"
)

// TestListingFingerprintCoversEveryField: a listing that differs from the
// last one in any field of any endpoint must not pass for the same
// listing, or the change would never be published. The fields are walked
// by reflection, so a field added to events.Endpoint later is covered or
// fails here.
func TestListingFingerprintCoversEveryField(t *testing.T) {
	base := func() events.Endpoint {
		return events.Endpoint{DNSName: "a.example.org", RecordType: "A", Targets: []string{"192.0.2.1"},
			SetIdentifier: "eu", RecordTTL: 60, Labels: map[string]string{"k": "v"},
			ProviderSpecific: []events.ProviderSpecificProperty{{Name: "n", Value: "v"}}}
	}
	zones := []string{"example.org"}
	want := listingFingerprint([]events.Endpoint{base()}, zones)
	if got := listingFingerprint([]events.Endpoint{base()}, zones); got != want {
		t.Fatalf("the same listing fingerprints differently: %x, %x", got, want)
	}
	typ := reflect.TypeFor[events.Endpoint]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		ep := base()
		v := reflect.ValueOf(&ep).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Int64:
			v.SetInt(v.Int() + 1)
		case reflect.Slice:
			switch s := v.Addr().Interface().(type) {
			case *[]string:
				*s = append(*s, "192.0.2.2")
			case *[]events.ProviderSpecificProperty:
				(*s)[0].Value = "w"
			default:
				t.Fatalf("field %s: no change written for %s", f.Name, f.Type)
			}
		case reflect.Map:
			ep.Labels = map[string]string{"k": "w"}
		default:
			t.Fatalf("field %s: no change written for %s", f.Name, f.Type)
		}
		if listingFingerprint([]events.Endpoint{ep}, zones) == want {
			t.Errorf("changing %s leaves the fingerprint alone", f.Name)
		}
	}
	if listingFingerprint([]events.Endpoint{base()}, []string{"example.org", "sub.example.org"}) == want {
		t.Error("a new zone leaves the fingerprint alone (it moves names out of the zone)")
	}
	// Boundaries between fields count: "ab"+"c" is not "a"+"bc".
	a, b := base(), base()
	a.DNSName, a.RecordType = "x.example.orgA", ""
	b.DNSName, b.RecordType = "x.example.org", "A"
	if listingFingerprint([]events.Endpoint{a}, zones) == listingFingerprint([]events.Endpoint{b}, zones) {
		t.Error("fields run into each other")
	}
}

// TestEditBackToAnEarlierListingIsPublished: a full listing the same as
// the last one publishes nothing, but only while nothing else was
// published for the zone since. Here a plan's names are read back (x now
// holds .10), then the zone is put back by hand to exactly what the last
// full listing held: the next listing must publish x's .9 again, though it
// is the same listing as that earlier one.
func TestEditBackToAnEarlierListingIsPublished(t *testing.T) {
	ctx := t.Context()
	s := natsenv.StartT(t)
	_, js := natsenv.Connect(t, s.ClientURL())
	if err := events.EnsureStreams(ctx, js, events.WithStorage(jetstream.MemoryStorage)); err != nil {
		t.Fatal(err)
	}
	mem, err := inmemory.New(inmemory.Config{Zones: []string{"example.org"}}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewWithProvider(Config{Provider: inmemory.Name, Interval: time.Hour, DefaultTTL: 300}, "mem", nameReader{mem},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	a.hashes, a.lastAck = map[string]string{}, events.NewLastAck(js, events.StreamObserved)
	x := func(target string) events.Endpoint { return events.NewEndpoint("x.example.org", "A", 60, target) }
	set := func(old, new *events.Endpoint) {
		t.Helper()
		if err := mem.Apply(ctx, "example.org", []events.Change{{Old: old, New: new}}); err != nil {
			t.Fatal(err)
		}
	}
	published := func(want string) {
		t.Helper()
		st0, err := js.Stream(ctx, events.StreamObserved)
		if err != nil {
			t.Fatal(err)
		}
		m, err := st0.GetLastMsgForSubject(ctx, events.ObservedSubject("mem", "x.example.org"))
		if err != nil {
			t.Fatal(err)
		}
		var st events.ObservedState
		if err := events.Unmarshal(m.Header, m.Data, &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Records) != 1 || st.Records[0].Targets[0] != want {
			t.Fatalf("x published as %+v, want %s", st.Records, want)
		}
	}

	nine, ten := x("192.0.2.9"), x("192.0.2.10")
	set(nil, &nine)
	if err := a.syncZone(ctx, "example.org", ""); err != nil {
		t.Fatal(err)
	}
	published("192.0.2.9")
	set(&nine, &ten)
	rb, err := a.readBack(ctx, "example.org", []events.Change{{Old: &nine, New: &ten}}, "")
	if err != nil {
		t.Fatal(err)
	}
	a.storeLater(ctx, rb)
	a.awaitObserved()
	published("192.0.2.10")
	set(&ten, &nine)
	if err := a.syncZone(ctx, "example.org", ""); err != nil {
		t.Fatal(err)
	}
	published("192.0.2.9")
}

// nameReader reads names back as rfc2136 and pdns do, so that a plan's
// names are published without a full listing.
type nameReader struct{ *inmemory.Provider }

func (r nameReader) RecordsAt(ctx context.Context, zone string, names []string) ([]events.Endpoint, error) {
	eps, err := r.Records(ctx, zone)
	return provider.AtNames(eps, names), err
}
