package kubestatus

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zonestream/zonestream/events"
)

// heldTransitions are the DeleteHeld Events a hold of the planner's
// mass-delete guard makes: one on each object of this cluster whose
// records are among the deletes held, named by the resource label of
// their ownership records (kind/namespace/name; an encrypted one cannot
// be read here, and its object gets no Event). The label does not name
// the cluster: every collector of the owner that watches such an object
// tells it, if it exists (the writer looks).
func (b *book) heldTransitions(h *events.HeldDeletes) []Transition {
	if h.IsTombstone() {
		return nil
	}
	objs := map[events.ObjectRef]bool{}
	for _, c := range h.Changes {
		if c.New != nil || c.Old.RecordType != events.RecordTypeTXT {
			continue
		}
		for _, txt := range c.Old.Targets {
			kind, rest, ok := strings.Cut(registryResource(txt), "/")
			ns, name, ok2 := strings.Cut(rest, "/")
			o := events.ObjectRef{Cluster: b.cluster, Source: kind, Namespace: ns, Name: name}
			if ok && ok2 && b.owns(o) {
				objs[o] = true
			}
		}
	}
	detail := fmt.Sprintf("held by the mass-delete guard: %s; "+
		"`zonestream plans approve %s` lets them through, a configuration that wants the records again releases them",
		h.Summary(), h.ID)
	var out []Transition
	for _, o := range slices.SortedFunc(maps.Keys(objs), events.CompareRefs) {
		out = append(out, Transition{Object: o, Name: h.Zone, To: Outcome{State: Held, Reason: EventDeleteHeld, Detail: detail}})
	}
	return out
}
