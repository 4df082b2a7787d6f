// Package provider is the one interface between the applier and a DNS
// provider: list the zones, list what a zone holds, apply a batch of RRset
// changes under preconditions.
package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// Provider is a DNS provider as the applier sees it. The applier calls it
// through Checked: zone arguments come normalized, and Apply gets only
// non-empty batches that passed CheckChanges.
type Provider interface {
	// Zones returns the zones the provider manages, normalized with
	// events.NormalizeName.
	Zones(ctx context.Context) ([]string, error)
	// Records returns every RRset of zone except its SOA, one Endpoint per
	// name and type, normalized and sorted (events.SortEndpoints).
	Records(ctx context.Context, zone string) ([]events.Endpoint, error)
	// Apply applies changes to zone, in the order given. Each change
	// replaces one RRset, and only while the provider holds exactly
	// Old's targets for it (no such RRset when Old is nil; TTLs are not
	// compared). If a precondition fails, nothing of the batch is applied
	// and the error wraps ErrStale. An error wrapping ErrPermanent means the
	// provider rejected the batch and retrying it unchanged is pointless;
	// any other error is transient. When a provider had to split the
	// batch and applied a prefix of it before failing, the error is a
	// *PartialError saying how many changes were applied.
	Apply(ctx context.Context, zone string, changes []events.Change) error
}

// ErrStale is wrapped by Apply's error when a change's precondition no
// longer holds: the plan was computed from observations that are no
// longer current.
var ErrStale = errors.New("precondition failed: provider state changed since the plan was computed")

// ErrPermanent is wrapped by Apply's error when the provider rejected the
// changes themselves (bad record, refused, out of zone).
var ErrPermanent = errors.New("rejected by provider")

type permanentError struct{ err error }

func (e permanentError) Error() string        { return e.err.Error() }
func (e permanentError) Unwrap() error        { return e.err }
func (e permanentError) Is(target error) bool { return target == ErrPermanent }

// Permanent marks err as a permanent rejection (errors.Is(err, ErrPermanent)).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// Permanentf is Permanent(fmt.Errorf(...)).
func Permanentf(format string, args ...any) error { return Permanent(fmt.Errorf(format, args...)) }

// PartialError says that the first Applied changes of a batch were applied
// before Err stopped the rest.
type PartialError struct {
	Applied int
	Err     error
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("%d change(s) applied, then: %v", e.Applied, e.Err)
}
func (e *PartialError) Unwrap() error { return e.Err }

// AppliedCount is how many leading changes err says were applied.
func AppliedCount(err error) int {
	var pe *PartialError
	if errors.As(err, &pe) {
		return pe.Applied
	}
	return 0
}

// Options every provider gets from the applier.
type Options struct {
	// DefaultTTL is the TTL a New endpoint without one is written with.
	DefaultTTL int64
	Logger     *slog.Logger
}

// WithDefaults returns o with DefaultTTL and Logger filled in where unset,
// for providers' New.
func (o Options) WithDefaults() Options {
	if o.DefaultTTL <= 0 {
		o.DefaultTTL = DefaultTTL
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// DefaultTTL is the TTL of records whose endpoint has none.
const DefaultTTL = 300

// MaxTTL is the largest TTL DNS allows (RFC 2181).
const MaxTTL = 1<<31 - 1

// TTL is the TTL ep is written with: its own, at most MaxTTL, or else
// defaultTTL (--default-ttl).
func TTL(ep events.Endpoint, defaultTTL int64) int64 {
	if ep.RecordTTL > 0 {
		return min(ep.RecordTTL, MaxTTL)
	}
	return defaultTTL
}

// NameTargetTypes are the record types whose targets are DNS names.
var NameTargetTypes = []string{"CNAME", "NS", "PTR", "DNAME"}

// NormalizeEndpoint returns a normalized copy of ep, with targets in the
// canonical form providers compare: IP addresses in their canonical text,
// DNS name targets via events.NormalizeName, sorted and de-duplicated.
func NormalizeEndpoint(ep events.Endpoint) events.Endpoint {
	ep.Targets = slices.Clone(ep.Targets)
	ep.Normalize()
	switch {
	case ep.RecordType == "A" || ep.RecordType == "AAAA":
		for i, t := range ep.Targets {
			if a, err := netip.ParseAddr(strings.TrimSpace(t)); err == nil {
				ep.Targets[i] = a.String()
			}
		}
	case slices.Contains(NameTargetTypes, ep.RecordType):
		for i, t := range ep.Targets {
			ep.Targets[i] = events.NormalizeName(t)
		}
	}
	slices.Sort(ep.Targets)
	ep.Targets = slices.Compact(ep.Targets)
	return ep
}

// SameTargets reports whether two endpoints hold the same targets once
// normalized; TTLs are not compared.
func SameTargets(a, b events.Endpoint) bool {
	return slices.Equal(NormalizeEndpoint(a).Targets, NormalizeEndpoint(b).Targets)
}

// InZone reports whether name is zone or below it.
func InZone(name, zone string) bool {
	name, zone = events.NormalizeName(name), events.NormalizeName(zone)
	return zone == "" || name == zone || strings.HasSuffix(name, "."+zone)
}

// ZoneOf returns the most specific of zones that name is in (the longest),
// or "" when it is in none; names and zones are compared normalized.
func ZoneOf(name string, zones []string) string {
	best := ""
	for _, z := range zones {
		if z = events.NormalizeName(z); z != "" && InZone(name, z) && len(z) > len(best) {
			best = z
		}
	}
	return best
}

// KeyOf is ep's RRset, normalized: the name by events.NormalizeName, the
// type upper-cased.
func KeyOf(ep events.Endpoint) events.RRsetKey {
	return events.RRsetKey{
		DNSName:       events.NormalizeName(ep.DNSName),
		RecordType:    strings.ToUpper(strings.TrimSpace(ep.RecordType)),
		SetIdentifier: ep.SetIdentifier,
	}
}

// ChangeKey is the RRset c replaces: KeyOf its Old, else of its New.
func ChangeKey(c events.Change) events.RRsetKey {
	if c.Old != nil {
		return KeyOf(*c.Old)
	}
	return KeyOf(*c.New)
}

// CheckOld checks change c's precondition against what the provider holds
// for its RRset (have, when exists): Old nil wants no RRset, else one with
// Old's targets, TTL not compared. The error wraps ErrStale.
func CheckOld(c events.Change, have events.Endpoint, exists bool) error {
	k := c.Key()
	switch {
	case c.Old == nil && exists:
		return fmt.Errorf("%w: %s: %s %s exists (%s)", ErrStale, c, k.DNSName, k.RecordType, strings.Join(have.Targets, ", "))
	case c.Old != nil && !exists:
		return fmt.Errorf("%w: %s: %s %s does not exist", ErrStale, c, k.DNSName, k.RecordType)
	case c.Old != nil && !SameTargets(*c.Old, have):
		return fmt.Errorf("%w: %s: %s %s holds [%s], the plan expected [%s]", ErrStale, c, k.DNSName, k.RecordType,
			strings.Join(have.Targets, ", "), strings.Join(NormalizeEndpoint(*c.Old).Targets, ", "))
	}
	return nil
}

// CheckChanges validates the shape of changes for zone: each has an Old or
// a New, Old and New name the same RRset, the name is inside zone. The
// error wraps ErrPermanent.
func CheckChanges(zone string, changes []events.Change) error {
	for i, c := range changes {
		if c.Old == nil && c.New == nil {
			return Permanentf("change %d: neither old nor new", i)
		}
		if c.Old != nil && c.New != nil {
			o, n := NormalizeEndpoint(*c.Old), NormalizeEndpoint(*c.New)
			if o.DNSName != n.DNSName || o.RecordType != n.RecordType {
				return Permanentf("change %d: old %s %s and new %s %s are different RRsets", i, o.DNSName, o.RecordType, n.DNSName, n.RecordType)
			}
		}
		k := c.Key()
		if events.NormalizeName(k.DNSName) == "" || k.RecordType == "" {
			return Permanentf("change %d: empty name or record type", i)
		}
		if !InZone(k.DNSName, zone) {
			return Permanentf("change %s: name is not in zone %s", c, zone)
		}
		if c.New != nil && len(c.New.Targets) == 0 {
			return Permanentf("change %s: new endpoint has no targets (delete with New = nil)", c)
		}
	}
	return nil
}
