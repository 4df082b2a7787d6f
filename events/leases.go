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

// leaseSubject is the subject a lease key is stored under, for
// permissions: the KV API publishes a key's writes to it.
func leaseSubject(key string) string { return "$KV." + BucketLeases + "." + key }

// LeaseStream is the stream behind the lease bucket.
const LeaseStream = "KV_" + BucketLeases

// EnsureLeases creates the lease bucket if it is missing, with the
// replicas and storage the streams get.
func EnsureLeases(ctx context.Context, js jetstream.JetStream, opts ...StreamOption) error {
	_, err := js.KeyValue(ctx, BucketLeases)
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		if err != nil {
			return fmt.Errorf("bucket %s: %w", BucketLeases, err)
		}
		return nil
	}
	var sc jetstream.StreamConfig
	for _, o := range opts {
		o(&sc)
	}
	cfg := jetstream.KeyValueConfig{Bucket: BucketLeases, History: 1, TTL: leaseBucketTTL,
		Description: "leader leases: which replica of each stage instance works (events/leader)",
		Replicas:    max(sc.Replicas, 1), Storage: sc.Storage}
	if _, err := js.CreateKeyValue(ctx, cfg); err != nil && !errors.Is(err, jetstream.ErrBucketExists) {
		return fmt.Errorf("bucket %s: %w", BucketLeases, err)
	}
	return nil
}
