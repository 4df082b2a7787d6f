package rfc2136

import (
	"fmt"
	"net"
	"strings"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// endpointsOf turns RRs of zone into endpoints, one per name and type,
// leaving out the SOA, what DNSSEC signing adds and names outside zone.
func endpointsOf(zone string, rrs []dns.RR) []events.Endpoint {
	sets := make(map[events.RRsetKey]*events.Endpoint)
	var keys []events.RRsetKey
	for _, rr := range rrs {
		h := rr.Header()
		switch h.Rrtype {
		case dns.TypeSOA, dns.TypeRRSIG, dns.TypeNSEC, dns.TypeNSEC3, dns.TypeNSEC3PARAM, dns.TypeTSIG:
			continue
		}
		name := events.NormalizeName(h.Name)
		if !provider.InZone(name, zone) {
			continue
		}
		k := events.RRsetKey{DNSName: name, RecordType: dns.TypeToString[h.Rrtype]}
		if k.RecordType == "" {
			k.RecordType = fmt.Sprintf("TYPE%d", h.Rrtype)
		}
		ep, ok := sets[k]
		if !ok {
			ep = &events.Endpoint{DNSName: name, RecordType: k.RecordType, RecordTTL: int64(h.Ttl)}
			sets[k] = ep
			keys = append(keys, k)
		}
		if int64(h.Ttl) < ep.RecordTTL {
			ep.RecordTTL = int64(h.Ttl)
		}
		ep.Targets = append(ep.Targets, Target(rr))
	}
	eps := make([]events.Endpoint, 0, len(keys))
	for _, k := range keys {
		eps = append(eps, provider.NormalizeEndpoint(*sets[k]))
	}
	events.SortEndpoints(eps)
	return eps
}

// Target renders an RR's data as an endpoint target: the IP for A/AAAA,
// the normalized name for CNAME/NS/PTR/DNAME, the concatenated unescaped
// character-strings for TXT, miekg's presentation otherwise.
func Target(rr dns.RR) string {
	switch r := rr.(type) {
	case *dns.A:
		return r.A.String()
	case *dns.AAAA:
		return r.AAAA.String()
	case *dns.CNAME:
		return events.NormalizeName(r.Target)
	case *dns.NS:
		return events.NormalizeName(r.Ns)
	case *dns.PTR:
		return events.NormalizeName(r.Ptr)
	case *dns.DNAME:
		return events.NormalizeName(r.Target)
	case *dns.TXT:
		var b strings.Builder
		for _, s := range r.Txt {
			b.WriteString(provider.UnescapeTXT(s))
		}
		return b.String()
	}
	return strings.TrimSpace(strings.TrimPrefix(rr.String(), rr.Header().String()))
}

// addressRR is the A or AAAA record of hdr for address t, built as
// dns.NewRR would build it from the zone file line but without the line:
// most records are addresses, and parsing a line per record was most of
// the CPU of rendering a plan. Nil when t is not a plain address of the
// type, for NewRR to parse (or refuse) as before.
func addressRR(hdr dns.RR_Header, t string) dns.RR {
	ip := net.ParseIP(t)
	if ip == nil || strings.Contains(t, ":") != (hdr.Rrtype == dns.TypeAAAA) {
		return nil
	}
	if hdr.Rrtype == dns.TypeA {
		return &dns.A{Hdr: hdr, A: ip}
	}
	return &dns.AAAA{Hdr: hdr, AAAA: ip}
}

// RRs renders an endpoint as the RRs of its RRset, with ttl.
func RRs(ep events.Endpoint, ttl uint32) ([]dns.RR, error) {
	name := dns.Fqdn(events.NormalizeName(ep.DNSName))
	rtype, ok := dns.StringToType[strings.ToUpper(ep.RecordType)]
	if !ok {
		return nil, fmt.Errorf("unknown record type %q", ep.RecordType)
	}
	hdr := dns.RR_Header{Name: name, Rrtype: rtype, Class: dns.ClassINET, Ttl: ttl}
	rrs := make([]dns.RR, 0, len(ep.Targets))
	for _, t := range ep.Targets {
		switch rtype {
		case dns.TypeTXT:
			rrs = append(rrs, &dns.TXT{Hdr: hdr, Txt: provider.SplitTXT(t)})
			continue
		case dns.TypeCNAME, dns.TypeNS, dns.TypePTR, dns.TypeDNAME:
			t = dns.Fqdn(events.NormalizeName(t))
		case dns.TypeA, dns.TypeAAAA:
			if rr := addressRR(hdr, t); rr != nil {
				rrs = append(rrs, rr)
				continue
			}
		}
		rr, err := dns.NewRR(fmt.Sprintf("%s %d IN %s %s", name, ttl, dns.TypeToString[rtype], t))
		if err != nil {
			return nil, fmt.Errorf("%s %s %q: %w", ep.DNSName, ep.RecordType, t, err)
		}
		if rr == nil {
			return nil, fmt.Errorf("%s %s: empty target", ep.DNSName, ep.RecordType)
		}
		rrs = append(rrs, rr)
	}
	return rrs, nil
}
