package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/miekg/dns"
)

// WaitZones polls the SOA of every zone at addr every 100ms until each is
// answered, p exits, ctx ends or deadline passes. check, when not nil, is
// called each round while p runs and once more when the wait fails (e.g.
// a PortTaken): its error ends the wait and is the one returned.
func WaitZones(ctx context.Context, p *Process, addr string, zones []string, deadline time.Time, check func() error) error {
	err := waitZones(ctx, p, addr, zones, deadline, check)
	if err != nil && check != nil {
		if cerr := check(); cerr != nil {
			return cerr
		}
	}
	return err
}

func waitZones(ctx context.Context, p *Process, addr string, zones []string, deadline time.Time, check func() error) error {
	pending := append([]string(nil), zones...)
	c := &dns.Client{Net: "udp", Timeout: 500 * time.Millisecond}
	for {
		select {
		case <-p.Exited():
			return p.ExitError()
		default:
		}
		if check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		for len(pending) > 0 {
			m := new(dns.Msg)
			m.SetQuestion(dns.Fqdn(pending[0]), dns.TypeSOA)
			r, _, err := c.ExchangeContext(ctx, m, addr)
			if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
				break
			}
			pending = pending[1:]
		}
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("zone %s not served:\n%s", pending[0], LastLines(p.Output(), 30))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		case <-p.Exited():
		}
	}
}
