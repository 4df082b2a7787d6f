package coredns

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// readNames is the most distinct names whose keys Apply reads one prefix
// each; with more it reads the whole zone.
const readNames = 8

// conflicts is how often Apply reads again when etcd changed between its
// read and its transaction, before it calls the plan stale.
const conflicts = 5

// Apply checks every change's precondition against the records etcd holds
// and writes the changes in one transaction, which etcd commits only if
// the keys read are unchanged. A plan needing more than --coredns-max-txn-ops
// operations is written in several transactions, in order; if a later one
// fails, the error is a *provider.PartialError.
func (p *Provider) Apply(ctx context.Context, zone string, changes []events.Change) error {
	for i, c := range changes {
		if c.New != nil {
			if err := checkNew(*c.New); err != nil {
				return provider.Permanentf("change %d (%s): %w", i, c, err)
			}
		}
	}
	applied := 0
	for applied < len(changes) {
		var n int
		err := p.retry(ctx, "apply to "+zone, func(ctx context.Context, client *clientv3.Client) (err error) {
			n, err = p.applyPrefix(ctx, client, zone, changes[applied:])
			return err
		})
		if err != nil {
			err = fmt.Errorf("coredns: apply %d change(s) to zone %s: %w", len(changes)-applied, zone, err)
			if applied > 0 {
				return &provider.PartialError{Applied: applied, Err: err}
			}
			return err
		}
		applied += n
	}
	return nil
}

// applyPrefix reads what etcd holds at the names of changes, checks their
// preconditions, and commits as many leading changes as fit in one
// transaction. It returns how many it committed.
func (p *Provider) applyPrefix(ctx context.Context, client *clientv3.Client, zone string, changes []events.Change) (int, error) {
	for range conflicts {
		st, err := p.read(ctx, client, zone, changes)
		if err != nil {
			return 0, err
		}
		// Every precondition of the rest of the plan is checked before
		// anything is written.
		t, err := st.plan(p, changes)
		if err != nil {
			return 0, err
		}
		n := len(changes)
		for !t.fits(p.cfg.MaxTxnOps) {
			if n == 1 {
				return 0, provider.Permanentf("change %s needs %d etcd operations, more than --coredns-max-txn-ops=%d", changes[0], t.size(), p.cfg.MaxTxnOps)
			}
			n /= 2
			if t, err = st.plan(p, changes[:n]); err != nil {
				return 0, err
			}
		}
		if len(t.ops) == 0 {
			return n, nil
		}
		r, err := client.Txn(ctx).If(t.cmps...).Then(t.ops...).Commit()
		if err != nil {
			return 0, err
		}
		if r.Succeeded {
			p.log.Debug("coredns: applied", "zone", zone, "changes", n, "etcd_ops", len(t.ops), "revision", r.Header.Revision)
			return n, nil
		}
		// etcd changed since the read: read again and re-check.
		p.log.Debug("coredns: etcd changed while applying, reading again", "zone", zone)
	}
	return 0, fmt.Errorf("%w: coredns: the keys of zone %s kept changing during %d attempts", provider.ErrStale, zone, conflicts)
}

// etcdRead is what etcd held at the names of a plan when it was read.
type etcdRead struct {
	prefix   string
	rev      int64    // the read's revision
	zone     string   // read whole (more than readNames names), or ""
	scopes   []string // key prefixes read
	kvs      []kv
	entries  map[string]entry
	existing map[string]kv // every key read, records or not
}

// read fetches every key at the names of changes in one consistent read:
// one prefix per name for a few names, the zone's prefix for more.
func (p *Provider) read(ctx context.Context, client *clientv3.Client, zone string, changes []events.Change) (*etcdRead, error) {
	var names []string
	for _, c := range changes {
		if n := events.NormalizeName(c.Key().DNSName); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	st := &etcdRead{prefix: p.cfg.Prefix}
	if len(names) > readNames {
		st.zone = zone
		st.scopes = []string{namePath(p.cfg.Prefix, zone)}
	} else {
		for _, n := range names {
			st.scopes = append(st.scopes, namePath(p.cfg.Prefix, n))
		}
	}
	ops := make([]clientv3.Op, 0, len(st.scopes))
	for _, s := range st.scopes {
		ops = append(ops, clientv3.OpGet(s, clientv3.WithPrefix()))
	}
	r, err := client.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return nil, err
	}
	st.rev = r.Header.Revision
	seen := map[string]bool{}
	for _, rr := range r.Responses {
		for _, k := range kvsOf((*clientv3.GetResponse)(rr.GetResponseRange())) {
			if !seen[k.key] {
				seen[k.key] = true
				st.kvs = append(st.kvs, k)
			}
		}
	}
	return p.index(st), nil
}

// index parses the keys read, quietly: Records reports bad entries.
func (p *Provider) index(st *etcdRead) *etcdRead {
	st.entries = map[string]entry{}
	st.existing = map[string]kv{}
	for _, k := range st.kvs {
		st.existing[k.key] = k
		if e, err := parseEntry(p.cfg.Prefix, k.key, k.value); err == nil {
			st.entries[k.key] = e
		}
	}
	return st
}

// txn is a transaction to commit: its comparisons and operations.
type txn struct {
	cmps []clientv3.Cmp
	ops  []clientv3.Op
}

func (t *txn) size() int               { return max(len(t.cmps), len(t.ops)) }
func (t *txn) fits(maxOps int) bool    { return t.size() <= maxOps }
func (w *working) live() bool          { return w.fields != nil }
func (w *working) holds(f string) bool { _, ok := w.fields[f]; return ok }

// working is one key as the plan leaves it.
type working struct {
	key     string
	orig    *kv                        // as read; nil for a new key
	fields  map[string]json.RawMessage // the value to write; nil: delete
	touched bool
}

// plan plays changes in order against st (which it leaves as it is),
// checking each precondition, and returns the transaction that writes the
// result.
func (st *etcdRead) plan(p *Provider, changes []events.Change) (*txn, error) {
	r := st.replay()
	for _, c := range changes {
		k := c.Key()
		k.DNSName = events.NormalizeName(k.DNSName)
		k.RecordType = strings.ToUpper(k.RecordType)
		if err := r.check(c, k); err != nil {
			return nil, err
		}
		if err := r.remove(k); err != nil {
			return nil, err
		}
		if c.New == nil {
			continue
		}
		if err := r.add(p, c, k); err != nil {
			return nil, err
		}
	}
	return st.txn(r.work, changes)
}

// replay is a plan being played against an etcd read: each key as the plan
// leaves it, and the records of each RRset with the keys that hold them.
type replay struct {
	st       *etcdRead
	work     map[string]*working
	sets     map[events.RRsetKey][]part
	partKeys map[events.RRsetKey][]string // partKeys[k][i] holds sets[k][i]
}

// replay starts playing a plan against st: every RRset as st read it.
func (st *etcdRead) replay() *replay {
	r := &replay{st: st, work: map[string]*working{}, sets: map[events.RRsetKey][]part{}, partKeys: map[events.RRsetKey][]string{}}
	for key, e := range st.entries {
		for _, pt := range e.parts {
			r.sets[pt.set] = append(r.sets[pt.set], pt)
			r.partKeys[pt.set] = append(r.partKeys[pt.set], key)
		}
	}
	return r
}

// get is key as the plan leaves it so far: as read, the first time.
func (r *replay) get(key string) (*working, error) {
	if w, ok := r.work[key]; ok {
		return w, nil
	}
	w := &working{key: key}
	if k, ok := r.st.existing[key]; ok {
		w.orig = &k
		if err := json.Unmarshal(k.value, &w.fields); err != nil {
			return nil, fmt.Errorf("key %s: %w", key, err)
		}
	}
	r.work[key] = w
	return w, nil
}

// check is c's precondition: the RRset k holds, as played so far, what c
// expects (nothing, for a create); otherwise the plan is stale.
func (r *replay) check(c events.Change, k events.RRsetKey) error {
	have := events.Endpoint{DNSName: k.DNSName, RecordType: k.RecordType}
	for _, pt := range r.sets[k] {
		have.Targets = append(have.Targets, pt.target)
	}
	have = provider.NormalizeEndpoint(have)
	if c.Old == nil {
		if len(have.Targets) > 0 {
			return fmt.Errorf("%w: coredns: %s: %s %s exists (%s)", provider.ErrStale, c, k.DNSName, k.RecordType, strings.Join(have.Targets, ", "))
		}
	} else if !provider.SameTargets(have, *c.Old) {
		return fmt.Errorf("%w: coredns: %s: %s %s holds [%s], the plan expected [%s]", provider.ErrStale, c, k.DNSName, k.RecordType,
			strings.Join(have.Targets, ", "), strings.Join(provider.NormalizeEndpoint(*c.Old).Targets, ", "))
	}
	return nil
}

// remove takes the RRset k's records out of their keys; a key left with
// neither host nor text goes.
func (r *replay) remove(k events.RRsetKey) error {
	for i, pt := range r.sets[k] {
		w, err := r.get(r.partKeys[k][i])
		if err != nil {
			return provider.Permanent(err)
		}
		delete(w.fields, pt.field)
		if !w.holds(fieldHost) && !w.holds(fieldText) {
			w.fields = nil
		}
		w.touched = true
	}
	delete(r.sets, k)
	delete(r.partKeys, k)
	return nil
}

// add writes c.New's records, each at a key of its own.
func (r *replay) add(p *Provider, c events.Change, k events.RRsetKey) error {
	ep := provider.NormalizeEndpoint(*c.New)
	field := fieldHost
	if k.RecordType == "TXT" {
		field = fieldText
	}
	for _, target := range ep.Targets {
		key, strip, err := r.freeKey(c, k, target)
		if err != nil {
			return err
		}
		svc := record{TTL: uint32(provider.TTL(ep, p.defaultTTL)), TargetStrip: strip, Group: groupOf(ep), SetIdentifier: k.SetIdentifier}
		if field == fieldText {
			svc.Text = target
		} else {
			svc.Host = target
		}
		raw, err := json.Marshal(svc)
		if err != nil {
			return provider.Permanent(err)
		}
		w, err := r.get(key)
		if err != nil {
			return provider.Permanent(err)
		}
		w.fields = nil
		if err := json.Unmarshal(raw, &w.fields); err != nil {
			return provider.Permanent(err)
		}
		w.touched = true
		r.sets[k] = append(r.sets[k], part{set: k, field: field, target: target})
		r.partKeys[k] = append(r.partKeys[k], key)
	}
	return nil
}

// freeKey is the key to write target of the RRset k at, one neither in
// etcd nor written by the plan (a salt tells apart records whose IDs
// collide), and its record's TargetStrip.
func (r *replay) freeKey(c events.Change, k events.RRsetKey, target string) (key string, strip int, err error) {
	for salt := 0; ; salt++ {
		// A CNAME goes at the name's own key: CoreDNS answers a
		// CNAME query only from there (A and AAAA queries also
		// look below the name).
		key, strip = namePath(r.st.prefix, k.DNSName)+"/"+recordID(k, target, salt), 1
		if k.RecordType == "CNAME" && salt == 0 {
			key, strip = namePath(r.st.prefix, k.DNSName), 0
		}
		w, inWork := r.work[key]
		_, inEtcd := r.st.existing[key]
		if (inWork && !w.live()) || (!inWork && !inEtcd) {
			return key, strip, nil
		}
		if salt == 16 {
			return "", 0, provider.Permanentf("%s: no free key for %s", c, target)
		}
	}
}

// txn turns the working keys into operations, guarded by comparisons:
// nothing under the prefixes of the names of changes (or the zone, when it
// was read whole) changed since the read, and every key the plan rewrites
// or deletes is still as read.
func (st *etcdRead) txn(work map[string]*working, changes []events.Change) (*txn, error) {
	t := &txn{}
	keys := make([]string, 0, len(work))
	for k := range work {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		w := work[key]
		if !w.touched {
			continue
		}
		if !w.live() {
			if w.orig != nil {
				t.ops = append(t.ops, clientv3.OpDelete(key))
				t.cmps = append(t.cmps, clientv3.Compare(clientv3.ModRevision(key), "=", w.orig.rev))
			}
			continue
		}
		raw, err := json.Marshal(w.fields)
		if err != nil {
			return nil, provider.Permanent(err)
		}
		if w.orig != nil {
			if same(raw, w.orig.value) {
				continue
			}
			t.cmps = append(t.cmps, clientv3.Compare(clientv3.ModRevision(key), "=", w.orig.rev))
		}
		t.ops = append(t.ops, clientv3.OpPut(key, string(raw)))
	}
	scopes := st.scopes
	if st.zone == "" {
		scopes = nil
		for _, c := range changes {
			if s := namePath(st.prefix, c.Key().DNSName); !slices.Contains(scopes, s) {
				scopes = append(scopes, s)
			}
		}
	}
	for _, s := range scopes {
		t.cmps = append(t.cmps, clientv3.Compare(clientv3.ModRevision(s), "<", st.rev+1).WithPrefix())
	}
	return t, nil
}

// same reports whether two JSON values are equal once decoded.
func same(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ra, _ := json.Marshal(x)
	rb, _ := json.Marshal(y)
	return bytes.Equal(ra, rb)
}
