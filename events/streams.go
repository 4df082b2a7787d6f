package events

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Stream names.
const (
	StreamSources    = "ZS_SOURCES"
	StreamDesired    = "ZS_DESIRED"
	StreamObserved   = "ZS_OBSERVED"
	StreamPlans      = "ZS_PLANS"
	StreamResults    = "ZS_RESULTS"
	StreamDeadLetter = "ZS_DEADLETTER"
	StreamHeld       = "ZS_HELD"
)

// StreamOption adjusts the stream definitions, e.g. for a clustered NATS.
type StreamOption func(*jetstream.StreamConfig)

// WithReplicas sets the replica count of every stream.
func WithReplicas(n int) StreamOption {
	return func(c *jetstream.StreamConfig) { c.Replicas = n }
}

// WithStorage picks file or memory storage for every stream.
func WithStorage(s jetstream.StorageType) StreamOption {
	return func(c *jetstream.StreamConfig) { c.Storage = s }
}

// historyPerSubject is how many past states of each key the state streams
// keep for audit; consumers only ever need the last one.
const historyPerSubject = 8

// Streams returns the definitions of every zonestream stream.
func Streams(opts ...StreamOption) []jetstream.StreamConfig {
	state := func(name, desc string, subjects ...string) jetstream.StreamConfig {
		return jetstream.StreamConfig{
			Name: name, Description: desc, Subjects: subjects,
			Retention: jetstream.LimitsPolicy, MaxMsgsPerSubject: historyPerSubject,
			Discard: jetstream.DiscardOld, Storage: jetstream.FileStorage,
			Duplicates: 2 * time.Minute, AllowDirect: true,
			// Tombstones roll their subject up and expire (codec.go).
			AllowRollup: true, AllowMsgTTL: true,
		}
	}
	streams := []jetstream.StreamConfig{
		state(StreamSources, "what each Kubernetes object wants (collector)", SubjectSources+".>"),
		state(StreamDesired, "what is wanted at each DNS name (dedup)", SubjectDesired+".>"),
		state(StreamObserved, "what each provider holds, and its zones (applier)", SubjectObserved+".>", SubjectZones+".>"),
		state(StreamHeld, "deletes held by the mass-delete guard (planner), and approvals (operator)", SubjectHeld+".>", SubjectApprovals+".>"),
		{
			Name: StreamPlans, Description: "change plans per zone (planner -> applier)",
			Subjects: []string{SubjectPlans + ".>"}, Retention: jetstream.WorkQueuePolicy,
			Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
		},
		{
			Name: StreamResults, Description: "outcome of each plan (applier)",
			Subjects: []string{SubjectResults + ".>"}, Retention: jetstream.LimitsPolicy,
			MaxAge: 24 * time.Hour, Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
		},
		{
			Name: StreamDeadLetter, Description: "messages a service could not decode",
			Subjects: []string{SubjectDeadLetter + ".>"}, Retention: jetstream.LimitsPolicy,
			MaxAge: 7 * 24 * time.Hour, Storage: jetstream.FileStorage,
		},
	}
	for i := range streams {
		for _, o := range opts {
			o(&streams[i])
		}
	}
	return streams
}

// EnsureStreams creates the streams that are missing. A stream that
// exists keeps what an operator set (limits, replicas, placement); only
// what the pipeline cannot work without is added to it: its subjects,
// rollups and per-message TTLs. Every service calls it at start, so any
// start order works. The lease bucket is ensured with them.
func EnsureStreams(ctx context.Context, js jetstream.JetStream, opts ...StreamOption) error {
	for _, want := range Streams(opts...) {
		st, err := js.Stream(ctx, want.Name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			_, err = js.CreateStream(ctx, want)
		} else if err == nil {
			if have, changed := required(st.CachedInfo().Config, want); changed {
				_, err = js.UpdateStream(ctx, have)
			}
		}
		if err != nil {
			return fmt.Errorf("stream %s: %w", want.Name, err)
		}
	}
	return EnsureLeases(ctx, js, opts...)
}

// required returns have with what want requires of it added, and whether
// that changed anything.
func required(have, want jetstream.StreamConfig) (jetstream.StreamConfig, bool) {
	changed := false
	for _, s := range want.Subjects {
		if !slices.Contains(have.Subjects, s) {
			have.Subjects = append(have.Subjects, s)
			changed = true
		}
	}
	if want.AllowRollup && (!have.AllowRollup || have.DenyPurge) {
		have.AllowRollup, have.DenyPurge, changed = true, false, true
	}
	if want.AllowMsgTTL && !have.AllowMsgTTL {
		have.AllowMsgTTL, changed = true, true
	}
	if want.AllowDirect && !have.AllowDirect {
		have.AllowDirect, changed = true, true
	}
	return have, changed
}
