package events

import (
	"slices"
	"strings"
	"time"
)

// The pipeline's marks say how complete the state streams are. A mark is
// trusted only while it is live: published after its reader started
// watching (Received.Live) and renewed within its lease. A mark read back
// from an earlier run is history, never permission: the run that wrote it
// may be gone and the world may have changed since, and a restart on state
// older than the cluster must delete nothing. Marks live on subjects with a
// '~' token (IsMarker).

// Collector phases, in the order a run goes through them.
const (
	// PhaseSyncing: the collector has started a run and has not yet
	// published every object it watches. Said first, before any object.
	PhaseSyncing = "syncing"
	// PhaseSynced: every object the collector watches has been published.
	PhaseSynced = "synced"
	// PhaseRetired: the operator removed the collector from the bus
	// (zonestream cluster retire); it no longer counts for completeness.
	PhaseRetired = "retired"
)

// CollectorRef names a collector by what it watches. A collector is one
// process of a cluster with its own set of sources (and namespace): a
// cluster may run several, and dedup counts each.
type CollectorRef struct {
	Cluster   string   `msgpack:"cluster" json:"cluster"`
	Collector string   `msgpack:"collector" json:"collector"`
	Sources   []string `msgpack:"sources" json:"sources"`
	// Namespace is the one namespace the collector watches; empty: all.
	Namespace string `msgpack:"namespace,omitempty" json:"namespace,omitempty"`
}

// Covers reports whether the collector watches obj: same cluster, one of
// its sources, and its namespace (cluster-scoped objects have none and are
// watched whatever the namespace).
func (c CollectorRef) Covers(obj ObjectRef) bool {
	return obj.Cluster == c.Cluster && slices.Contains(c.Sources, obj.Source) &&
		(c.Namespace == "" || obj.Namespace == "" || obj.Namespace == c.Namespace)
}

// Overlaps reports whether some object would be watched by both c and o:
// same cluster, a source in common, and namespaces that meet (either
// watches all, or both the same one). Two collectors that overlap cannot
// both be right at once (each would publish the other's objects): the
// newer is the older reconfigured. Collectors that do not overlap (other
// sources, or disjoint namespaces) are different collectors.
func (c CollectorRef) Overlaps(o CollectorRef) bool {
	return c.Cluster == o.Cluster && (c.Namespace == "" || o.Namespace == "" || c.Namespace == o.Namespace) &&
		slices.ContainsFunc(o.Sources, func(s string) bool { return slices.Contains(c.Sources, s) })
}

// CollectorState is what one collector says about its current run.
type CollectorState struct {
	CollectorRef
	// Run identifies the collector's run: a restart is a new run.
	Run   string `msgpack:"run" json:"run"`
	Phase string `msgpack:"phase" json:"phase"`
	// LeaseMillis is how long the mark holds after it was published
	// unless the collector renews it.
	LeaseMillis int64 `msgpack:"leaseMillis" json:"leaseMillis"`
}

func (*CollectorState) Schema() Schema { return Schema{"collector", 1} }
func (c *CollectorState) canonicalize() {
	c.Sources = sortedSet(c.Sources)
}
func (c *CollectorState) subject() string   { return CollectorSubject(c.Cluster, c.Collector) }
func (c *CollectorState) IsTombstone() bool { return c.Phase == PhaseRetired }

// Lease is how long the mark holds.
func (c *CollectorState) Lease() time.Duration { return millis(c.LeaseMillis) }

// CollectorID names a collector within its cluster by what it watches, so
// that the same configuration restarted is the same collector and two
// collectors splitting a cluster's sources are two.
func CollectorID(sources []string, namespace string) string {
	s := slices.Clone(sources)
	slices.Sort(s)
	id := strings.Join(slices.Compact(s), "+")
	if namespace != "" {
		id += "@" + namespace
	}
	return id
}

// ClusterClaim binds a cluster name to one Kubernetes cluster, by the UID
// of its kube-system namespace: a second cluster started with the same
// --cluster-name would read the first one's objects as its own and
// tombstone them. An empty UID releases the name.
type ClusterClaim struct {
	Cluster string `msgpack:"cluster" json:"cluster"`
	UID     string `msgpack:"uid" json:"uid"`
}

func (*ClusterClaim) Schema() Schema      { return Schema{"claim", 1} }
func (*ClusterClaim) canonicalize()       {}
func (c *ClusterClaim) subject() string   { return ClaimSubject(c.Cluster) }
func (c *ClusterClaim) IsTombstone() bool { return c.UID == "" }

// DesiredComplete says whether the desired stream, up to this message,
// holds what every collector on the bus wants. A planner may delete what is
// not in it only while it holds a live mark with Complete set; a mark
// without it (or from an earlier schema) withdraws that at once.
type DesiredComplete struct {
	Complete bool `msgpack:"complete" json:"complete"`
	// Clusters are the clusters whose collectors are all synced.
	Clusters []string `msgpack:"clusters" json:"clusters"`
	// Collectors are the collectors that must be synced for the desired
	// state to be complete: every collector dedup knows, from the sources
	// stream or carried over from its last mark, until it is retired (by
	// the operator, or by a collector of its cluster that replaces it:
	// CollectorRef.Overlaps). Every mark carries them, complete or not:
	// history read back only adds to them, so who must be synced survives
	// the loss of the sources stream and dedup's restarts. On a complete
	// mark, every one of them is synced.
	Collectors []CollectorRef `msgpack:"collectors,omitempty" json:"collectors,omitempty"`
	// RetiredCollectors are the collectors whose last mark on the sources
	// stream says retired, and RetiredClusters the clusters whose claim is
	// released there (zonestream cluster retire): only these may leave
	// Collectors.
	RetiredCollectors []CollectorRef `msgpack:"retiredCollectors,omitempty" json:"retiredCollectors,omitempty"`
	RetiredClusters   []string       `msgpack:"retiredClusters,omitempty" json:"retiredClusters,omitempty"`
	// Reason says, when not complete, what is missing.
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
	// Run identifies dedup's run.
	Run         string `msgpack:"run,omitempty" json:"run,omitempty"`
	LeaseMillis int64  `msgpack:"leaseMillis,omitempty" json:"leaseMillis,omitempty"`
}

func (*DesiredComplete) Schema() Schema { return Schema{"complete", 1} }
func (d *DesiredComplete) canonicalize() {
	d.Clusters = sortedSet(d.Clusters)
	d.RetiredClusters = sortedSet(d.RetiredClusters)
}
func (*DesiredComplete) subject() string { return DesiredCompleteSubject() }

// Lease is how long the mark holds.
func (d *DesiredComplete) Lease() time.Duration { return millis(d.LeaseMillis) }

func millis(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// LeaseFor is the lease a mark renewed every interval carries: three
// renewals may be missed before it lapses.
func LeaseFor(interval time.Duration) int64 { return (3 * interval).Milliseconds() }

// DefaultHeartbeat is how often collectors and dedup renew their marks.
const DefaultHeartbeat = 30 * time.Second

// HeartbeatUsage is the help of --heartbeat-interval, the one flag that
// sets DefaultHeartbeat's value in the collector and dedup alike.
const HeartbeatUsage = "how often the collector and dedup renew their completeness marks; a mark not renewed " +
	"within three intervals lapses, and deletes are held until it is renewed"
