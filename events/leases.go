package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Leader leases: of the replicas of one stage instance (the dedup, the
// planner, the applier of one provider, the collector of one cluster and
// set of sources), only the one holding the instance's lease works; the
// others stand by (events/leader). A lease is one key of a JetStream KV
// bucket, taken and renewed by compare-and-set on its revision: the bus
// is the one thing every stage reaches, so no stage needs a Kubernetes
// token to be elected.

// BucketLeases is the KV bucket of the leader leases.
const BucketLeases = "ZS_LEASES"

// leaseBucketTTL removes the key of an instance that is gone for good
// (a retired cluster's collector); a held lease is renewed every few
// seconds and never comes near it.
const leaseBucketTTL = 24 * time.Hour

// Lease keys of the stages: one per instance, so that replicas of one
// instance compete and different instances never do.
func DedupLease() string   { return leaseKey(RoleDedup) }
func PlannerLease() string { return leaseKey(RolePlanner) }

// ApplierLease is the lease of the applier of provider: appliers of two
// providers each have their own leader (and their own durable consumer,
// ApplierDurable).
func ApplierLease(provider string) string { return leaseKey(RoleApplier, provider) }

// CollectorLease is the lease of the collector collector (CollectorID) of
// cluster.
func CollectorLease(cluster, collector string) string {
	return leaseKey(RoleCollector, cluster, collector)
}

// leaseKey joins parts into a KV key. A KV key allows letters, digits and
// "-/_=." only: each part is EscapeToken'd, with '=' for its '%'.
func leaseKey(parts ...string) string {
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(EscapeToken(p), "%", "=")
	}
	return strings.Join(parts, ".")
}

// LeaseSubject is the subject a lease key is stored under: the KV API
// publishes a key's writes to it (permissions), and its last message is
// the key's value or, once deleted, the marker that says so.
func LeaseSubject(key string) string { return "$KV." + BucketLeases + "." + key }

// LeaseStream is the stream behind the lease bucket.
const LeaseStream = "KV_" + BucketLeases

// Bounds of the lease bucket: a lease is a few hundred bytes (its
// holder's name, times), and an identity may make keys under its own
// lease only. A full bucket refuses new keys and keeps renewing the held
// ones (DiscardNew, one message per key).
const (
	leaseMaxBytes      = 8 << 20
	leaseMaxValueBytes = 4 << 10
)

// EnsureLeases creates the lease bucket if it is missing, with the
// replicas and storage the streams get, and keeps rollups off its stream:
// the KV API turns them on, and a rollup published on one's own lease key
// would purge every other stage's lease. events/leader takes, renews and
// releases a lease with writes of its own key only, which need none.
func EnsureLeases(ctx context.Context, js jetstream.JetStream, opts ...StreamOption) error {
	var sc jetstream.StreamConfig
	for _, o := range opts {
		o(&sc)
	}
	_, err := js.KeyValue(ctx, BucketLeases)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		cfg := jetstream.KeyValueConfig{Bucket: BucketLeases, History: 1, TTL: leaseBucketTTL,
			Description: "leader leases: which replica of each stage instance works (events/leader)",
			MaxBytes:    leaseMaxBytes, MaxValueSize: leaseMaxValueBytes,
			Replicas: max(sc.Replicas, 1), Storage: sc.Storage}
		_, err = js.CreateKeyValue(ctx, cfg)
		if errors.Is(err, jetstream.ErrBucketExists) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("bucket %s: %w", BucketLeases, err)
	}
	return ensureStream(ctx, js, jetstream.StreamConfig{Name: LeaseStream, MaxMsgsPerSubject: 1,
		MaxBytes: leaseMaxBytes, Discard: jetstream.DiscardNew})
}
