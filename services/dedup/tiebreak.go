package dedup

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"

	"github.com/zonestream/zonestream/events"
)

// candidate is one object's endpoint for one RRset, or the endpoint several
// objects of one source want together (uniteSameSource).
type candidate struct {
	object events.ObjectRef
	united []events.ObjectRef // the other objects whose targets ep holds
	ep     events.Endpoint
}

// compareCandidates is ExternalDNS' tie-break, made total: fewer targets
// first, then the lower targets compared one by one, then the lower object
// (cluster, source, namespace, name), so that arrival order never matters.
// Targets must be normalized (sorted, de-duplicated).
func compareCandidates(a, b candidate) int {
	return cmp.Or(compareTargets(a.ep.Targets, b.ep.Targets), events.CompareRefs(a.object, b.object))
}

// compareTargets orders target lists as ExternalDNS does: the shorter list
// first; of equal lengths, the first differing target decides, an IP
// address sorting before a name and addresses by value.
func compareTargets(a, b []string) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		ipA, errA := netip.ParseAddr(a[i])
		ipB, errB := netip.ParseAddr(b[i])
		switch {
		case errA == nil && errB == nil:
			return ipA.Compare(ipB)
		case errA == nil:
			return -1
		case errB == nil:
			return 1
		}
		return cmp.Compare(a[i], b[i])
	}
	return 0
}

// pickWinner chooses the one candidate that keeps an RRset: an object that
// already owns it keeps it; otherwise the tie-break decides. It returns the
// winner and why each other candidate lost.
func pickWinner(name string, cs []candidate, holders []events.ObjectRef) (candidate, []events.Loser) {
	holding := slices.DeleteFunc(slices.Clone(cs), func(c candidate) bool { return !c.holds(holders) })
	win := slices.MinFunc(cs, compareCandidates)
	if len(holding) > 0 {
		win = slices.MinFunc(holding, compareCandidates)
	}
	var losers []events.Loser
	for _, c := range cs {
		if c.object == win.object {
			continue
		}
		reason := lossReason(name, win, c)
		for _, o := range c.objects() {
			losers = append(losers, events.Loser{Object: o, Reason: reason})
		}
	}
	return win, losers
}

// lossReason says what decided against lost. Ownership is named only when
// it overruled the tie-break, so the reason (and the event's hash) is the
// same before and after the winner became the holder.
func lossReason(name string, win, lost candidate) string {
	rrset := fmt.Sprintf("%s %s", win.ep.RecordType, name)
	if win.ep.SetIdentifier != "" {
		rrset += fmt.Sprintf(" (set %q)", win.ep.SetIdentifier)
	}
	switch {
	case compareCandidates(lost, win) < 0:
		return fmt.Sprintf("object %s already owns %s", refString(win.object), rrset)
	case len(win.ep.Targets) < len(lost.ep.Targets):
		return fmt.Sprintf("object %s wants fewer targets for %s", refString(win.object), rrset)
	case !slices.Equal(win.ep.Targets, lost.ep.Targets):
		return fmt.Sprintf("object %s wants lower targets for %s", refString(win.object), rrset)
	}
	return fmt.Sprintf("object %s wants the same targets for %s and sorts first", refString(win.object), rrset)
}

// refString names an object in a loser's reason: cluster/source/namespace/name.
func refString(o events.ObjectRef) string { return o.Cluster + "/" + o.Resource() }
