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
	// Ownership.Registry (--registry) is where ownership is kept: txt,
	// noop, or crd (ExternalDNS' DNSRecord objects). The planner plans by
	// it, the readers of ownership read by it; with crd the applier keeps
	// ownership in DNSRecords, in CRDRegistryNamespace
	// (--crd-registry-namespace; empty: the namespace it runs in).
	CRDRegistryNamespace string
	// Kubeconfig and Master (--kubeconfig, --master) locate the API server:
	// the collector's sources, the applier's DNSRecords (--registry=crd).
	Kubeconfig, Master string
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
	RegistryFlags
	KubeFlags
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
	if groups&RegistryFlags != 0 {
		fs.StringVar(&s.Ownership.Registry, "registry", "txt", "where ownership is kept: txt (ownership TXT records), noop (none: every record of a managed type in scope is ours) "+
			"or crd (ExternalDNS' DNSRecord objects, externaldns.k8s.io/v1alpha1, as ExternalDNS' --registry=crd)")
		fs.StringVar(&s.CRDRegistryNamespace, "crd-registry-namespace", "", "with --registry=crd: the namespace of the DNSRecord objects (default: the namespace zonestream runs in, else default)")
	}
	if groups&KubeFlags != 0 {
		fs.StringVar(&s.Kubeconfig, "kubeconfig", "", "path to a kubeconfig file; empty: in-cluster config, else $KUBECONFIG or ~/.kube/config")
		fs.StringVar(&s.Master, "master", "", "address of the Kubernetes API server; overrides the kubeconfig's")
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
