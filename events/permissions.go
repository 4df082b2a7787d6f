package events

import "slices"

// The permission model of the bus: what each identity may publish and
// subscribe to, derived from the subjects and streams of the contract so
// that the two cannot drift apart. zonestream nats-config renders it as a
// nats-server configuration. Everything not listed is refused.
//
// JetStream is driven by requests published to $JS.API.<operation>.<stream>...
// (and acks to $JS.ACK.<stream>.<consumer>...), so what an identity may do
// to a stream is which of those subjects it may publish to. Replies (acks
// of publishes, pulled messages) come to the identity's own inbox prefix
// only, so no one reads the replies of another.
//
// Removal: no identity but the operator may purge a stream or delete a
// message (the planner may on ZS_PLANS, which it alone writes), and no
// stream takes a rollup (streams.go, leases.go): a permission covers a
// subject, not the Nats-Rollup header a message on it carries.
//
// Known limit: a consumer's name is one subject token and permissions
// match whole tokens, so a reader may pull from or delete any consumer of
// a stream it reads whose name it knows. Names are random (nats.go's
// ordered consumers) and no identity may list consumers; the one fixed
// name, an applier's durable, is its applier's alone.
//
// Known limit: whoever may create a consumer on a stream may make it a push
// consumer delivering to any subject, and the server stores what it
// delivers in the stream holding that subject, if someone subscribes to
// it. Only the operator identity may subscribe to the pipeline's subjects
// (services read them through consumers), so an operator should follow
// them with zonestream tail, never with a plain `nats sub zs.>`.

// Identity roles.
const (
	RoleCollector = "collector"
	RoleDedup     = "dedup"
	RolePlanner   = "planner"
	RoleApplier   = "applier"
	// RolePortal reads the streams for the portal's page: it writes nothing.
	RolePortal = "portal"
	// RoleOperator administers the streams (zonestream streams ensure,
	// cluster retire, tail, explain): it may do anything.
	RoleOperator = "operator"
)

// Permissions are what one identity may do on the bus.
type Permissions struct {
	// Identity names the holder: collector-<cluster>, dedup, planner,
	// applier-<provider>, operator.
	Identity string
	Role     string
	// Publish and Subscribe are the subjects allowed; wildcards as NATS'.
	Publish, Subscribe []string
	// InboxPrefix is the --nats-inbox-prefix the holder connects with.
	InboxPrefix string
	// Responds lets the holder answer the requests it receives (NATS'
	// allow_responses): the applier answers the planner's adjust
	// requests (adjust.go) in the planner's inbox, which it may not
	// otherwise publish to.
	Responds bool
	// StageFlags are the flags its stage must run with to stay within
	// these permissions.
	StageFlags []string
}

const (
	jsAPI = "$JS.API."
	jsAck = "$JS.ACK."
)

// every stream, for STREAM.INFO: EnsureStreams looks at each at start
// (the lease bucket's too).
var allStreams = []string{StreamSources, StreamDesired, StreamObserved, StreamPlans, StreamResults, StreamDeadLetter, StreamHeld, LeaseStream}

// newPermissions starts the permissions of an identity: its inbox, the
// stream lookups every service makes at start, and its dead-letter subject.
func newPermissions(role, qualifier string) *Permissions {
	id := role
	if qualifier != "" {
		id += "-" + EscapeToken(qualifier)
	}
	p := &Permissions{Identity: id, Role: role, InboxPrefix: "_INBOX." + id}
	p.Subscribe = append(p.Subscribe, p.InboxPrefix+".>")
	for _, s := range allStreams {
		p.Publish = append(p.Publish, jsAPI+"STREAM.INFO."+s)
	}
	p.Publish = append(p.Publish, DeadLetterSubject(role))
	return p
}

// publish allows publishing to subjects (which the streams store).
func (p *Permissions) publish(subjects ...string) { p.Publish = append(p.Publish, subjects...) }

// read allows reading stream through consumers of its own making (as
// events.Watch makes them), filtered to filter; filter "" allows any
// filter, which a consumer with several filters needs (their filters are
// then not part of the request's subject).
func (p *Permissions) read(stream, filter string) {
	create := jsAPI + "CONSUMER.CREATE." + stream + ".*"
	switch {
	case filter == "":
		p.publish(create, create+".>")
	case slices.Equal(streamSubjects(stream), []string{filter}):
		// A watch of the whole stream asks for it unfiltered
		// (narrowFilters): the request's subject then has no filter.
		p.publish(create, create+"."+filter)
	default:
		p.publish(create + "." + filter)
	}
	for _, op := range []string{"MSG.NEXT", "INFO", "DELETE"} {
		p.publish(jsAPI + "CONSUMER." + op + "." + stream + ".*")
	}
}

// streamSubjects returns the subjects stream stores.
func streamSubjects(stream string) []string {
	for _, c := range Streams() {
		if c.Name == stream {
			return c.Subjects
		}
	}
	return nil
}

// directGet allows reading the last message of the subjects matching
// filter (jetstream.Stream.GetLastMsgForSubject on a stream with direct
// gets, as every state stream has).
func (p *Permissions) directGet(stream, filter string) {
	p.publish(jsAPI + "DIRECT.GET." + stream + "." + filter)
}

// lease allows taking, renewing and releasing the leader leases matching
// key (events/leader): a KV write is a publish to the key's subject, a
// read a direct get of its last message.
func (p *Permissions) lease(key string) {
	p.publish(LeaseSubject(key))
	p.directGet(LeaseStream, LeaseSubject(key))
}

// done sorts and deduplicates, so that the rendered configuration is
// stable.
func (p *Permissions) done() Permissions {
	for _, l := range []*[]string{&p.Publish, &p.Subscribe} {
		*l = sortedSet(*l)
	}
	return *p
}

// CollectorPermissions: a collector of cluster publishes under its own
// cluster's subjects only (its objects, its marks, its claim), reads them
// back, and reads (never writes) the pipeline's outcome for the status of
// its objects: desired state, observed state, zone lists, plan results,
// held deletes. Those subjects name a DNS name, not the clusters that want
// it, so the outcome it reads is every cluster's; on a bus whose clusters
// must not learn of each other, give it CollectorPermissionsWithoutStatus.
// Each stage holds only its own leader lease (a collector: its cluster's).
func CollectorPermissions(cluster string) Permissions {
	p := collectorPermissions(cluster)
	p.read(StreamObserved, SubjectObserved+".>")
	p.read(StreamObserved, SubjectZones+".>")
	p.read(StreamDesired, SubjectDesired+".>")
	p.read(StreamResults, SubjectResults+".>")
	p.read(StreamHeld, SubjectHeld+".>")
	return p.done()
}

// CollectorPermissionsWithoutStatus: a collector of cluster that reads
// nothing but its own objects, run with --kube-status=false (as
// ExternalDNS, it then writes no outcome back to its objects). Its
// cluster learns nothing of the others on the bus.
func CollectorPermissionsWithoutStatus(cluster string) Permissions {
	p := collectorPermissions(cluster)
	p.StageFlags = []string{"--kube-status=false"}
	return p.done()
}

func collectorPermissions(cluster string) *Permissions {
	p := newPermissions(RoleCollector, cluster)
	own := SourceFilter(cluster)
	p.publish(own)
	p.read(StreamSources, own)
	p.directGet(StreamSources, own)
	p.lease(leaseKey(RoleCollector, cluster) + ".*")
	p.Subscribe = append(p.Subscribe, RenewCollectorsSubject()) // renewal.go
	return p
}

// DedupPermissions: dedup reads every source and publishes the desired
// state (and its completeness mark).
func DedupPermissions() Permissions {
	p := newPermissions(RoleDedup, "")
	p.publish(SubjectDesired + ".>")
	p.read(StreamSources, SubjectSources+".>")
	p.read(StreamDesired, SubjectDesired+".>")
	p.directGet(StreamDesired, SubjectDesired+".>")
	p.lease(DedupLease())
	p.publish(RenewCollectorsSubject())                       // renewal.go
	p.Subscribe = append(p.Subscribe, RenewCompleteSubject()) // renewal.go
	return p.done()
}

// PlannerPermissions: the planner reads desired and observed state and
// results, publishes plans, and withdraws plans: it deletes superseded
// ones and purges an earlier run's (services/planner/supersede.go), on
// ZS_PLANS only. It publishes the deletes it holds and reads them back
// with the operator's approvals (never writes one).
func PlannerPermissions() Permissions {
	p := newPermissions(RolePlanner, "")
	p.publish(SubjectPlans+".>", SubjectHeld+".>")
	p.read(StreamHeld, "") // holds and approvals: two filters
	p.read(StreamDesired, SubjectDesired+".>")
	p.read(StreamObserved, "") // observed names and zone lists: two filters
	p.read(StreamResults, SubjectResults+".>")
	p.publish(jsAPI+"STREAM.MSG.DELETE."+StreamPlans, jsAPI+"STREAM.PURGE."+StreamPlans)
	p.lease(PlannerLease())
	p.publish(RenewCompleteSubject()) // renewal.go
	p.publish(SubjectAdjust + ".>")   // adjust.go
	return p.done()
}

// ApplierDurable is the durable consumer through which the applier of
// provider takes its plans.
func ApplierDurable(provider string) string { return "applier-" + EscapeToken(provider) }

// ApplierPermissions: the applier of provider takes the plans for its
// provider only, from its own durable consumer, and publishes what its
// provider holds, its zones and the results of its plans.
func ApplierPermissions(provider string) Permissions {
	p := newPermissions(RoleApplier, provider)
	observed, zones := ObservedFilter(provider), ZonesSubject(provider)
	p.publish(observed, zones, join(SubjectResults, EscapeToken(provider), ">"))
	p.read(StreamObserved, observed)
	p.read(StreamObserved, zones)
	p.directGet(StreamObserved, zones)
	durable := ApplierDurable(provider)
	p.publish(
		jsAPI+"CONSUMER.CREATE."+StreamPlans+"."+durable+"."+PlanFilter(provider),
		jsAPI+"CONSUMER.MSG.NEXT."+StreamPlans+"."+durable,
		jsAPI+"CONSUMER.INFO."+StreamPlans+"."+durable,
		// A plan left unacked by a run that is gone is taken over at once
		// (services/applier/takeover.go), by making the consumer again.
		jsAPI+"CONSUMER.DELETE."+StreamPlans+"."+durable,
		jsAck+StreamPlans+"."+durable+".>",
	)
	p.lease(ApplierLease(provider))
	p.Subscribe = append(p.Subscribe, AdjustSubject(provider)) // adjust.go
	p.Responds = true
	return p.done()
}

// DeclaredApplierIdentity qualifies the identity of the applier that runs
// the providers declared as DNSProvider and ClusterDNSProvider objects
// (applier --dnsproviders): applier-dnsproviders.
const DeclaredApplierIdentity = "dnsproviders"

// DeclaredApplierPermissions: the applier of declared providers runs one
// applier per object, each under the object's name on the bus
// (DeclaredProvider), and objects come and go while it runs: it may do
// what ApplierPermissions allows for any provider. A permission matches
// whole subject tokens, and a declared provider's name is one token, so
// "any declared provider" is any provider: it may also publish the zone
// lists, holdings and results of the providers declared by flags, take
// their plans and their leases. Its consumers on ZS_PLANS are its
// appliers' durables (ApplierDurable), but "applier-*" is no token
// wildcard: it may make, read, ack and delete any consumer of ZS_PLANS.
// It publishes no desired state, no plan, no source, and holds no lease
// but appliers'.
func DeclaredApplierPermissions() Permissions {
	p := newPermissions(RoleApplier, DeclaredApplierIdentity)
	observed, zones := join(SubjectObserved, "*", ">"), join(SubjectZones, "*")
	p.publish(observed, zones, join(SubjectResults, "*", ">"))
	p.read(StreamObserved, observed)
	p.read(StreamObserved, zones)
	p.directGet(StreamObserved, zones)
	p.publish(
		jsAPI+"CONSUMER.CREATE."+StreamPlans+".*."+join(SubjectPlans, "*", ">"),
		jsAPI+"CONSUMER.MSG.NEXT."+StreamPlans+".*",
		jsAPI+"CONSUMER.INFO."+StreamPlans+".*",
		jsAPI+"CONSUMER.DELETE."+StreamPlans+".*",
		jsAck+StreamPlans+".*.>",
	)
	p.lease(leaseKey(RoleApplier) + ".*")
	p.Subscribe = append(p.Subscribe, join(SubjectAdjust, "*")) // adjust.go
	p.Responds = true
	return p.done()
}

// PortalPermissions: the portal reads desired and observed state and
// results, reads a name's history subject by subject (direct gets of the
// next message for a subject, on the state streams), and sees the plans go
// by through a plain subscription, which takes nothing from their work
// queue. It publishes nothing but its requests.
func PortalPermissions() Permissions {
	p := newPermissions(RolePortal, "")
	p.read(StreamDesired, SubjectDesired+".>")
	p.read(StreamObserved, "") // observed names and zone lists: two filters
	p.read(StreamResults, SubjectResults+".>")
	p.read(StreamHeld, SubjectHeld+".>")
	for _, s := range []string{StreamSources, StreamDesired, StreamObserved} {
		p.publish(jsAPI + "DIRECT.GET." + s)
	}
	p.Subscribe = append(p.Subscribe, SubjectPlans+".>")
	return p.done()
}

// OperatorPermissions: the operator may do anything, streams included.
func OperatorPermissions() Permissions {
	p := &Permissions{Identity: RoleOperator, Role: RoleOperator, InboxPrefix: "_INBOX." + RoleOperator,
		Publish: []string{">"}, Subscribe: []string{">"}}
	return *p
}
