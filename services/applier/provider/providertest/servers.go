package providertest

import (
	"encoding/json"
	"strings"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
	"github.com/zonestream/zonestream/services/applier/provider/rfc2136"
	"github.com/zonestream/zonestream/testenv/bind"
	corednsenv "github.com/zonestream/zonestream/testenv/coredns"
	pdnsenv "github.com/zonestream/zonestream/testenv/pdns"
)

// The real servers of testenv as Servers of example.org.

// BIND plants records with UPDATE messages of its own.
type BIND struct{ *bind.Server }

func (b BIND) Plant(name, typ string, ttl int, value string) error {
	old, err := b.rrset(name, typ)
	if err != nil {
		return err
	}
	add, err := rfc2136.RRs(events.NewEndpoint(name, typ, int64(ttl), value), uint32(ttl))
	if err != nil {
		return err
	}
	return b.Update("example.org", add, old)
}

func (b BIND) Remove(name, typ string) error {
	old, err := b.rrset(name, typ)
	if err != nil {
		return err
	}
	return b.Update("example.org", nil, old)
}

// rrset is what BIND answers for name and typ.
func (b BIND) rrset(name, typ string) ([]dns.RR, error) {
	qtype := dns.StringToType[typ]
	rrs, err := b.Query(name, qtype)
	var out []dns.RR
	for _, rr := range rrs {
		if rr.Header().Rrtype == qtype {
			out = append(out, rr)
		}
	}
	return out, err
}

// PowerDNS plants records through its API, in its content form.
type PowerDNS struct{ *pdnsenv.Server }

func (s PowerDNS) Plant(name, typ string, ttl int, value string) error {
	return s.Server.Plant("example.org", name, typ, ttl, pdns.Content(typ, value))
}

func (s PowerDNS) Remove(name, typ string) error { return s.Server.Remove("example.org", name, typ) }

// CoreDNS plants records as etcd keys, as an operator with etcdctl would:
// it rewrites the keys of name's records (a TXT goes to the name's own
// key). Its outage is etcd stopping.
type CoreDNS struct{ *corednsenv.Server }

func (s CoreDNS) Plant(name, typ string, ttl int, value string) error {
	if typ == "TXT" {
		v, _ := json.Marshal(map[string]any{"text": value, "ttl": ttl})
		return s.Put(s.Key(name, ""), string(v))
	}
	keys, err := s.keysOf(name)
	if err != nil {
		return err
	}
	v, _ := json.Marshal(map[string]any{"host": value, "ttl": ttl, "targetstrip": 1})
	for k := range keys {
		if err := s.Put(k, string(v)); err != nil {
			return err
		}
	}
	if len(keys) == 0 {
		v, _ = json.Marshal(map[string]any{"host": value, "ttl": ttl})
		return s.Put(s.Key(name, ""), string(v))
	}
	return nil
}

// Remove deletes every key of name's records (whatever their type).
func (s CoreDNS) Remove(name, _ string) error {
	keys, err := s.keysOf(name)
	for k := range keys {
		if err == nil {
			err = s.Delete(k)
		}
	}
	return err
}

// keysOf is the keys of name's records: its own, and those one level
// below it (ids).
func (s CoreDNS) keysOf(name string) (map[string]string, error) {
	keys, err := s.Keys(s.Key(name, ""))
	for k := range keys {
		if k != s.Key(name, "") && !strings.HasPrefix(k, s.Key(name, "")+"/") {
			delete(keys, k)
		}
	}
	return keys, err
}

func (s CoreDNS) Stop() error { return s.StopEtcd() }
