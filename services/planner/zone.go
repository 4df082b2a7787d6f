package planner

import "github.com/zonestream/zonestream/events/domains"

// zoneOf returns the longest of zones that name lies in.
func zoneOf(name string, zones []string) (string, bool) {
	best := ""
	for _, z := range zones {
		if domains.Within(name, z) && len(z) > len(best) {
			best = z
		}
	}
	return best, best != ""
}
