package probe

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
)

// Answer is what DNS answered for one name.
type Answer struct {
	// Records maps each record type asked to the targets answered, in
	// the form events.Endpoint holds them.
	Records map[string][]string
	Latency time.Duration
	// Err is set when DNS did not answer: timeout, SERVFAIL, REFUSED.
	// NXDOMAIN and an empty answer are answers.
	Err error
}

// Resolver asks one DNS server.
type Resolver struct {
	Addr    string // host:port
	Timeout time.Duration
}

// Ask asks for every type of name, one query each.
func (r Resolver) Ask(ctx context.Context, name string, types []string) Answer {
	client := &dns.Client{Timeout: r.Timeout}
	a := Answer{Records: map[string][]string{}}
	start := time.Now()
	for _, t := range types {
		qtype, ok := dns.StringToType[t]
		if !ok {
			continue
		}
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(name), qtype)
		resp, _, err := client.ExchangeContext(ctx, m, r.Addr)
		if err == nil && resp.Truncated {
			tcp := &dns.Client{Net: "tcp", Timeout: r.Timeout}
			resp, _, err = tcp.ExchangeContext(ctx, m, r.Addr)
		}
		if err != nil {
			a.Err = fmt.Errorf("%s %s: %w", name, t, err)
			a.Latency = time.Since(start)
			return a
		}
		if resp.Rcode != dns.RcodeSuccess && resp.Rcode != dns.RcodeNameError {
			a.Err = fmt.Errorf("%s %s: DNS answered %s", name, t, dns.RcodeToString[resp.Rcode])
			a.Latency = time.Since(start)
			return a
		}
		var targets []string
		for _, rr := range resp.Answer {
			if rr.Header().Rrtype != qtype || !strings.EqualFold(strings.TrimSuffix(rr.Header().Name, "."), name) {
				continue
			}
			targets = append(targets, target(rr))
		}
		if len(targets) > 0 {
			ep := events.NewEndpoint(name, t, 0, targets...)
			a.Records[t] = slices.Compact(slices.Sorted(slices.Values(ep.Targets)))
		}
	}
	a.Latency = time.Since(start)
	return a
}

// target renders an answer's data as an endpoint target.
func target(rr dns.RR) string {
	switch v := rr.(type) {
	case *dns.A:
		return v.A.String()
	case *dns.AAAA:
		return v.AAAA.String()
	case *dns.CNAME:
		return v.Target
	case *dns.TXT:
		return strings.Join(v.Txt, "")
	}
	hdr := rr.Header().String()
	return strings.TrimSpace(strings.TrimPrefix(rr.String(), hdr))
}
