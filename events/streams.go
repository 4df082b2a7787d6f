package events

import (
	"context"
	"errors"
	"fmt"
	"reflect"
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

// The state streams keep one message per subject: the newest state of a
// key replaces the one before by the limit, not by a rollup. Rollups stay
// off on every stream several identities write, because nats-server checks
// no permission on a Nats-Rollup header: a rollup "all" published on one's
// own subject would purge every other identity's state. With one message
// per subject a tombstone is all its subject holds, so its expiry
// (TombstoneTTL) leaves the subject empty and can resurrect no older state.
const statePerSubject = 1

// Bounds of the streams, so that no identity can fill the disk through
// the subjects it may write. A full state stream or plans stream refuses
// new keys (DiscardNew, ErrStreamFull) and keeps every live state; a new
// state of a key it holds still replaces the old one. Results and dead
// letters are records of the past: the oldest go first (DiscardOld).
// The sum stays under the 1.5 GiB a nats-server gives JetStream on a 2 GiB
// volume (deploy/kubernetes), since a stream reserves its MaxBytes.
//
// A deleted key keeps its tombstone for TombstoneTTL, about 390 bytes
// stored, so a state stream must hold its live keys plus 15 minutes of
// deletes: 256 MiB is some 680,000 keys. ZS_OBSERVED gets twice that, since every
// name a provider holds comes with its ownership record's name.
const (
	stateMaxBytes      = 256 << 20
	stateMaxMsgs       = 1 << 20
	observedMaxBytes   = 2 * stateMaxBytes
	observedMaxMsgs    = 2 * stateMaxMsgs
	heldMaxBytes       = 32 << 20
	heldMaxMsgs        = 64 << 10
	plansMaxBytes      = 64 << 20
	plansMaxMsgs       = 64 << 10
	resultsMaxBytes    = 64 << 20
	resultsMaxMsgs     = 256 << 10
	deadLetterMaxBytes = 32 << 20
	deadLetterMaxMsgs  = 64 << 10
)

// Streams returns the definitions of every zonestream stream.
func Streams(opts ...StreamOption) []jetstream.StreamConfig {
	state := func(name, desc string, maxBytes, maxMsgs int64, subjects ...string) jetstream.StreamConfig {
		return jetstream.StreamConfig{
			Name: name, Description: desc, Subjects: subjects,
			Retention: jetstream.LimitsPolicy, MaxMsgsPerSubject: statePerSubject,
			MaxMsgs: maxMsgs, MaxBytes: maxBytes, Discard: jetstream.DiscardNew,
			Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute, AllowDirect: true,
			// Tombstones expire (codec.go).
			AllowMsgTTL: true,
		}
	}
	streams := []jetstream.StreamConfig{
		state(StreamSources, "what each Kubernetes object wants (collector)", stateMaxBytes, stateMaxMsgs, SubjectSources+".>"),
		state(StreamDesired, "what is wanted at each DNS name (dedup)", stateMaxBytes, stateMaxMsgs, SubjectDesired+".>"),
		state(StreamObserved, "what each provider holds, and its zones (applier)", observedMaxBytes, observedMaxMsgs,
			SubjectObserved+".>", SubjectZones+".>"),
		state(StreamHeld, "deletes held by the mass-delete guard (planner), and approvals (operator)", heldMaxBytes, heldMaxMsgs,
			SubjectHeld+".>", SubjectApprovals+".>"),
		{
			Name: StreamPlans, Description: "change plans per zone (planner -> applier)",
			Subjects: []string{SubjectPlans + ".>"}, Retention: jetstream.WorkQueuePolicy,
			MaxMsgs: plansMaxMsgs, MaxBytes: plansMaxBytes, Discard: jetstream.DiscardNew,
			Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
		},
		{
			Name: StreamResults, Description: "outcome of each plan (applier)",
			Subjects: []string{SubjectResults + ".>"}, Retention: jetstream.LimitsPolicy,
			MaxAge: 24 * time.Hour, MaxMsgs: resultsMaxMsgs, MaxBytes: resultsMaxBytes, Discard: jetstream.DiscardOld,
			Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute,
		},
		{
			Name: StreamDeadLetter, Description: "messages a service could not decode",
			Subjects: []string{SubjectDeadLetter + ".>"}, Retention: jetstream.LimitsPolicy,
			MaxAge: 7 * 24 * time.Hour, MaxMsgs: deadLetterMaxMsgs, MaxBytes: deadLetterMaxBytes, Discard: jetstream.DiscardOld,
			Storage: jetstream.FileStorage,
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
// exists keeps what an operator set (limits, replicas, placement); what
// the pipeline's safety needs is put right on it: its subjects, one
// message per subject and DiscardNew for state, per-message TTLs, direct
// gets, no rollups, and a bound where it has none. Every service calls it
// at start, so any start order works. The lease bucket is ensured with
// them.
func EnsureStreams(ctx context.Context, js jetstream.JetStream, opts ...StreamOption) error {
	for _, want := range Streams(opts...) {
		if err := ensureStream(ctx, js, want); err != nil {
			return err
		}
	}
	return EnsureLeases(ctx, js, opts...)
}

// ensureStream creates want, or brings the stream of its name to what
// required asks of it.
func ensureStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig) error {
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
	return nil
}

// required returns have with what want requires of it, and whether that
// changed anything. Rollups are turned off whatever have says: they let
// one identity purge what others wrote. A state stream (want keeps one
// message per subject) gets that limit and DiscardNew: more history would
// let an expired tombstone resurrect the state before it, and DiscardOld
// would drop live state when full. A limit an operator set is kept; an
// unbounded stream gets want's bound.
func required(have, want jetstream.StreamConfig) (jetstream.StreamConfig, bool) {
	was := have
	for _, s := range want.Subjects {
		if !slices.Contains(have.Subjects, s) {
			have.Subjects = append(have.Subjects, s)
		}
	}
	have.AllowRollup = false
	if want.MaxMsgsPerSubject > 0 {
		have.MaxMsgsPerSubject = want.MaxMsgsPerSubject
	}
	if want.Discard == jetstream.DiscardNew {
		have.Discard = jetstream.DiscardNew
	}
	if have.MaxBytes <= 0 && want.MaxBytes > 0 {
		have.MaxBytes = want.MaxBytes
	}
	if have.MaxMsgs <= 0 && want.MaxMsgs > 0 {
		have.MaxMsgs = want.MaxMsgs
	}
	have.AllowMsgTTL = have.AllowMsgTTL || want.AllowMsgTTL
	have.AllowDirect = have.AllowDirect || want.AllowDirect
	return have, !reflect.DeepEqual(have, was)
}
