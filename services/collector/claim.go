package collector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/events"
)

// ErrClusterNameTaken: --cluster-name is bound to another Kubernetes
// cluster on this bus. Running on would read that cluster's objects back
// as this one's and tombstone every one of them.
var ErrClusterNameTaken = errors.New("cluster name is held by another cluster")

// identityNamespace is the namespace whose UID identifies a cluster: every
// cluster has it, and it is never re-created.
const identityNamespace = "kube-system"

// claimClusterName binds the cluster name to this cluster on the bus, or
// returns ErrClusterNameTaken if another cluster holds it. The first
// collector to claim a name wins, even when two start at once.
func (r *run) claimClusterName(ctx context.Context) error {
	delay := retryBase
	for {
		err := r.tryClaim(ctx)
		if errors.Is(err, errNoClusterIdentity) && r.c.cfg.PrivateBus {
			// ExternalDNS' Helm chart grants no get on namespaces (but for
			// gateway sources): its releases run zonestream without it.
			// The all-in-one's own bus has one cluster by construction.
			r.logger.Warn("--cluster-name is not bound to this cluster: its identity cannot be read; "+
				"harmless on the all-in-one's embedded NATS, which no other cluster reaches", "err", err)
			return nil
		}
		if err == nil || errors.Is(err, ErrClusterNameTaken) || errors.Is(err, errNoClusterIdentity) || ctx.Err() != nil {
			return err
		}
		r.logger.Warn("binding the cluster name failed; retrying", "err", err, "in", delay)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, retryMax)
	}
}

// errNoClusterIdentity: the cluster's identity cannot be read, and waiting
// will not change that (no permission, no such namespace).
var errNoClusterIdentity = errors.New("cannot read the cluster's identity")

func (r *run) tryClaim(ctx context.Context) error {
	ns, err := r.c.client.CoreV1().Namespaces().Get(ctx, identityNamespace, metav1.GetOptions{})
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) || apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: namespace %s, whose UID binds --cluster-name=%s to this cluster (the collector needs get on namespaces): %w",
			errNoClusterIdentity, identityNamespace, r.c.cfg.ClusterName, err)
	}
	if err != nil {
		return fmt.Errorf("reading namespace %s: %w", identityNamespace, err)
	}
	uid := string(ns.UID)
	subject := events.ClaimSubject(r.c.cfg.ClusterName)
	stream, err := r.js.Stream(ctx, events.StreamSources)
	if err != nil {
		return err
	}
	for {
		var seq uint64
		last, err := stream.GetLastMsgForSubject(ctx, subject)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
		case err != nil:
			return fmt.Errorf("reading the claim on --cluster-name=%s: %w", r.c.cfg.ClusterName, err)
		default:
			var held events.ClusterClaim
			decodeErr := events.Decode(events.Received{Subject: last.Subject, Header: last.Header, Data: last.Data}, &held)
			switch {
			case decodeErr == nil && held.UID == uid:
				return nil
			case decodeErr == nil && held.UID != "":
				claimRefused.Inc()
				return fmt.Errorf("%w: --cluster-name=%s belongs to the cluster whose %s namespace has UID %s; this one's is %s. "+
					"Give this cluster its own --cluster-name, or retire the other (zonestream cluster retire %s) if it is gone",
					ErrClusterNameTaken, r.c.cfg.ClusterName, identityNamespace, held.UID, uid, r.c.cfg.ClusterName)
			}
			seq = last.Sequence // released, or unreadable: ours to take
		}
		_, _, err = events.Publish(ctx, r.js, subject, &events.ClusterClaim{Cluster: r.c.cfg.ClusterName, UID: uid}, "",
			jetstream.WithExpectLastSequencePerSubject(seq))
		var apiErr *jetstream.APIError
		if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
			continue // another collector claimed it meanwhile: read again
		}
		if err != nil {
			return fmt.Errorf("claiming --cluster-name=%s: %w", r.c.cfg.ClusterName, err)
		}
		r.logger.Info("cluster name claimed for this cluster", "uid", uid)
		return nil
	}
}
