package dedup

import (
	"slices"

	"github.com/zonestream/zonestream/events"
)

// wanted is everything dedup knows, rebuilt from the sources stream at start:
// the endpoints of every object, and which objects want each name.
type wanted struct {
	objects map[string]events.SourceState // by source subject
	// byName maps a DNS name to the subjects of the objects wanting it,
	// sorted: a slice, as most names are wanted by one object and a map
	// per name would cost several times more memory.
	byName map[string][]string
	// groups counts the objects of each cluster, source and namespace (the
	// ref's Name left empty): each group needs a synced collector before the
	// desired state is complete.
	groups map[events.ObjectRef]int
}

func newWanted() *wanted {
	return &wanted{objects: map[string]events.SourceState{}, byName: map[string][]string{},
		groups: map[events.ObjectRef]int{}}
}

func groupOf(o events.ObjectRef) events.ObjectRef { o.Name = ""; return o }

// set records an object's new endpoints and returns every name whose
// desired state may have changed: the names it wanted before and now.
func (s *wanted) set(subject string, src events.SourceState) []string {
	touched := map[string]struct{}{}
	if old, ok := s.objects[subject]; ok {
		for _, ep := range old.Endpoints {
			touched[ep.DNSName] = struct{}{}
			if i, found := slices.BinarySearch(s.byName[ep.DNSName], subject); found {
				s.byName[ep.DNSName] = slices.Delete(s.byName[ep.DNSName], i, i+1)
				if len(s.byName[ep.DNSName]) == 0 {
					delete(s.byName, ep.DNSName)
				}
			}
		}
	}
	// Normalized once here, so that every comparison in merge sees one
	// spelling of each name and target.
	for i := range src.Endpoints {
		src.Endpoints[i].Normalize()
	}
	_, had := s.objects[subject]
	switch g := groupOf(src.Object); {
	case src.IsTombstone() && had:
		delete(s.objects, subject)
		if s.groups[g]--; s.groups[g] <= 0 {
			delete(s.groups, g)
		}
	case src.IsTombstone():
	default:
		if !had {
			s.groups[g]++
		}
		s.objects[subject] = src
	}
	for _, ep := range src.Endpoints {
		touched[ep.DNSName] = struct{}{}
		if i, found := slices.BinarySearch(s.byName[ep.DNSName], subject); !found {
			s.byName[ep.DNSName] = slices.Insert(s.byName[ep.DNSName], i, subject)
		}
	}
	names := make([]string, 0, len(touched))
	for n := range touched {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// contributions lists what each object wants at name, in a fixed order.
func (s *wanted) contributions(name string) []contribution {
	subjects := s.byName[name]
	out := make([]contribution, 0, len(subjects))
	for _, subj := range subjects {
		obj := s.objects[subj]
		var eps []events.Endpoint
		for _, ep := range obj.Endpoints {
			if ep.DNSName == name {
				eps = append(eps, ep)
			}
		}
		out = append(out, contribution{object: obj.Object, endpoints: eps})
	}
	return out
}

func (s *wanted) names() []string {
	out := make([]string, 0, len(s.byName))
	for n := range s.byName {
		out = append(out, n)
	}
	return out
}
