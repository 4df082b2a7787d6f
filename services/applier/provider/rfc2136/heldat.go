package rfc2136

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// indexFrom is how many RRs a name holds before heldAt indexes them.
const indexFrom = 32

// heldAt is what the zone copy holds at one name. Nearly every name holds
// one or two RRs: a slice, found by a walk, costs a third of a map per
// name. A name with many (a large round robin) is indexed from indexFrom
// RRs on, so that copying or updating it stays linear in its size.
//
// RRs are the same by name, type, class and data, not by TTL, as IXFR
// deletions are matched (dns.IsDuplicate; rrID once indexed).
type heldAt struct {
	rrs   []dns.RR
	index map[string]int // rrID -> position in rrs; nil below indexFrom
}

// rrID identifies an RR as dns.IsDuplicate compares it, save that names
// in the data keep their case, as the server sends them.
func rrID(rr dns.RR) string {
	rr = dns.Copy(rr)
	h := rr.Header()
	h.Ttl = 0
	h.Name = strings.ToLower(h.Name)
	return rr.String()
}

func (h *heldAt) find(rr dns.RR) int {
	if h.index == nil {
		return slices.IndexFunc(h.rrs, func(held dns.RR) bool { return dns.IsDuplicate(held, rr) })
	}
	if i, ok := h.index[rrID(rr)]; ok {
		return i
	}
	return -1
}

// add puts rr in place of the same RR, or beside the others.
func (h *heldAt) add(rr dns.RR) {
	if i := h.find(rr); i >= 0 {
		h.rrs[i] = rr
		return
	}
	h.rrs = append(h.rrs, rr)
	switch {
	case h.index != nil:
		h.index[rrID(rr)] = len(h.rrs) - 1
	case len(h.rrs) >= indexFrom:
		h.index = make(map[string]int, len(h.rrs))
		for i, held := range h.rrs {
			h.index[rrID(held)] = i
		}
	}
}

// remove takes rr out; the last RR moves into its place.
func (h *heldAt) remove(rr dns.RR) {
	i := h.find(rr)
	if i < 0 {
		return
	}
	last := len(h.rrs) - 1
	if h.index != nil {
		delete(h.index, rrID(h.rrs[i]))
		if i != last {
			h.index[rrID(h.rrs[last])] = i
		}
	}
	h.rrs[i], h.rrs[last] = h.rrs[last], nil
	h.rrs = h.rrs[:last]
}
