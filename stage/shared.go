package stage

import (
	"flag"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/domains"
	"github.com/zonestream/zonestream/events/registry"
)

// Shared holds the flags that mean one thing in several stages. Each is
// defined here once; a process registers the groups its stages read, so
// the all-in-one and a stage on its own take the same flags with the same
// help.
type Shared struct {
	// ManagedRecordTypes (--managed-record-types): the collector publishes
	// and the planner manages these types; empty means A, AAAA, CNAME.
	ManagedRecordTypes StringList
	// Heartbeat (--heartbeat-interval): how often the collector and dedup
	// renew their completeness marks.
	Heartbeat time.Duration
	// Ownership is the TXT registry the planner writes and the collector
	// and the portal read to tell a name another owner holds.
	Ownership registry.Settings
	// Domains is the planner's domain filter, which the portal reads to
	// tell a name zonestream leaves alone.
	Domains domains.Settings
	// DryRun (--dry-run): the planner publishes its plans marked as such,
	// for the operator to see, and waits for no result; the applier takes
	// no plan. Nothing is written to DNS.
	DryRun bool
	// Once (--once): one pass, as ExternalDNS' one loop: the planner ends
	// when every name is planned and every plan has its result, the
	// applier when it cannot list its provider (stage.ErrFinished).
	Once bool
	// OnceTimeout (--once-timeout) bounds that pass: whatever hangs (an
	// API server that never answers, an applier that is down), the
	// process ends then, saying what the pass still waited for.
	OnceTimeout time.Duration
	// PrivateBus: the bus is the all-in-one's embedded NATS, on loopback,
	// which no other cluster's collector reaches. Set by the all-in-one,
	// not a flag.
	PrivateBus bool
}

// SharedGroups says which groups of shared flags a stage reads.
type SharedGroups uint8

const (
	RecordTypes SharedGroups = 1 << iota
	Heartbeat
	OwnershipFlags
	DomainFlags
	PassFlags
)

// RegisterFlags defines the shared flags of the groups given.
func (s *Shared) RegisterFlags(fs *flag.FlagSet, groups SharedGroups) {
	if groups&RecordTypes != 0 {
		fs.Var(&s.ManagedRecordTypes, "managed-record-types",
			"record types the pipeline manages, repeatable (default A, AAAA, CNAME); NodePort Services publish SRV records only if it holds SRV")
	}
	if groups&Heartbeat != 0 {
		fs.DurationVar(&s.Heartbeat, "heartbeat-interval", events.DefaultHeartbeat, events.HeartbeatUsage)
	}
	if groups&OwnershipFlags != 0 {
		fs.StringVar(&s.Ownership.OwnerID, "txt-owner-id", "default", "owner id written to and required in the TXT ownership records")
		fs.StringVar(&s.Ownership.Prefix, "txt-prefix", "", "prefix of the ownership TXT names; may hold %{record_type}; not with --txt-suffix")
		fs.StringVar(&s.Ownership.Suffix, "txt-suffix", "", "suffix of the first label of the ownership TXT names; may hold %{record_type}; not with --txt-prefix")
		fs.StringVar(&s.Ownership.WildcardReplacement, "txt-wildcard-replacement", "", "label written instead of a leading '*' in ownership TXT names")
	}
	if groups&PassFlags != 0 {
		fs.BoolVar(&s.DryRun, "dry-run", false, "plan and publish the plans (zonestream plans and the portal show them), apply nothing")
		fs.BoolVar(&s.Once, "once", false, "make one pass, then exit: 0 once every name is planned and every plan applied, non-zero when a plan was not applied or the provider could not be listed")
		fs.DurationVar(&s.OnceTimeout, "once-timeout", DefaultOnceTimeout, "with --once: end the pass after this long, non-zero, saying what it still waited for (an API server that never answers, an applier that is down); 0: no limit")
	}
	if groups&DomainFlags != 0 {
		fs.Var((*StringList)(&s.Domains.Include), "domain-filter", "limit to names in these domains (repeatable); intersected with the zones providers manage")
		fs.Var((*StringList)(&s.Domains.Exclude), "exclude-domains", "leave names in these domains alone (repeatable)")
		fs.StringVar(&s.Domains.Regex, "regex-domain-filter", "", "limit to names matching this regular expression; when set (or --regex-domain-exclusion is), replaces --domain-filter and --exclude-domains")
		fs.StringVar(&s.Domains.RegexExclusion, "regex-domain-exclusion", "", "leave names matching this regular expression alone (with --regex-domain-filter)")
	}
}
