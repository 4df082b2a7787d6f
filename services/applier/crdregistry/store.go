package crdregistry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/zonestream/zonestream/events"
)

// Store reads and writes one owner's DNSRecords in one namespace, always
// against the API server: a record written by this plan must be seen by
// the next one, which no cache promises.
type Store struct {
	client    dynamic.ResourceInterface
	namespace string
	owner     string
	log       *slog.Logger
}

// requestTimeout bounds each call to the API server: an API server that
// takes a connection and never answers must not hold the applier's
// listing or a plan for ever (the provider's own calls have
// --provider-timeout; these are beside them).
var requestTimeout = 30 * time.Second

// NewStore is the store of owner's DNSRecords in namespace.
func NewStore(cfg *rest.Config, namespace, owner string, logger *slog.Logger) (*Store, error) {
	if owner == "" {
		return nil, errors.New("--registry=crd needs --txt-owner-id")
	}
	if namespace == "" {
		return nil, errors.New("--registry=crd: no namespace for the DNSRecords")
	}
	if logger == nil {
		logger = slog.Default()
	}
	cfg = rest.CopyConfig(cfg)
	if cfg.Timeout <= 0 || cfg.Timeout > requestTimeout {
		cfg.Timeout = requestTimeout
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("--registry=crd: kubernetes client: %w", err)
	}
	return &Store{client: dyn.Resource(Resource).Namespace(namespace), namespace: namespace, owner: owner,
		log: logger.With("registry", "crd", "namespace", namespace)}, nil
}

// ours says whether r is of our owner.
func (s *Store) ours(r *DNSRecord) bool { return r.Owner() == s.owner }

// Namespace is where the DNSRecords are.
func (s *Store) Namespace() string { return s.namespace }

// List returns the DNSRecords of the namespace, of every owner: another
// owner's say whose a record is, so that it is never taken for no one's.
// One that cannot be read is logged, counted and skipped: its record is
// then no one's, never deleted.
func (s *Store) List(ctx context.Context) ([]*DNSRecord, error) {
	l, err := s.client.List(ctx, metav1.ListOptions{LabelSelector: OwnerLabel})
	if err != nil {
		return nil, fmt.Errorf("listing DNSRecords in %s: %w", s.namespace, err)
	}
	out := make([]*DNSRecord, 0, len(l.Items))
	for i := range l.Items {
		r, err := fromUnstructured(&l.Items[i])
		if err == nil && r.Spec.Endpoint.DNSName == "" {
			err = fmt.Errorf("DNSRecord %s/%s has no spec.endpoint.dnsName", r.Namespace, r.Name)
		}
		if err != nil {
			unreadable.Inc()
			s.log.Warn("a DNSRecord cannot be read; the record it speaks for counts as no one's", "err", err)
			continue
		}
		r.Spec.Endpoint.Normalize()
		out = append(out, r)
	}
	return out, nil
}

// get is the DNSRecord called name; nil when there is none.
func (s *Store) get(ctx context.Context, name string) (*DNSRecord, error) {
	u, err := s.client.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading DNSRecord %s/%s: %w", s.namespace, name, err)
	}
	return fromUnstructured(u)
}

// write makes a DNSRecord hold ep: have, when it exists, else a new one
// (or one a previous plan left, found by its name). One that names another
// owner is not ours to overwrite.
func (s *Store) write(ctx context.Context, ep events.Endpoint, have *DNSRecord) (*DNSRecord, error) {
	if have == nil {
		name := ObjectName(ep.Key())
		r := &DNSRecord{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.namespace,
			Labels: map[string]string{OwnerLabel: s.owner}}, Spec: DNSRecordSpec{Endpoint: ep}}
		u, err := r.toUnstructured()
		if err != nil {
			return nil, err
		}
		created, err := s.client.Create(ctx, u, metav1.CreateOptions{})
		if err == nil {
			return fromUnstructured(created)
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating DNSRecord %s/%s: %w", s.namespace, name, err)
		}
		if have, err = s.get(ctx, name); err != nil {
			return nil, err
		}
		if have == nil {
			return nil, fmt.Errorf("DNSRecord %s/%s was there, then was not: %w", s.namespace, name, errConflict)
		}
	}
	if o := have.Owner(); o != s.owner {
		return nil, fmt.Errorf("DNSRecord %s/%s belongs to owner %q, not %q: %w", s.namespace, have.Name, o, s.owner, errForeign)
	}
	next := *have
	next.Spec.Endpoint = ep
	u, err := next.toUnstructured()
	if err != nil {
		return nil, err
	}
	updated, err := s.client.Update(ctx, u, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("updating DNSRecord %s/%s: %w", s.namespace, have.Name, err)
	}
	return fromUnstructured(updated)
}

// setReady records the provider's outcome on r's Ready condition. It is
// what the object shows, and what makes it count as owned: a failure to
// write it is logged and counted, and leaves the record not owned (safe:
// nothing of it is then touched until a later plan writes it again).
func (s *Store) setReady(ctx context.Context, r *DNSRecord, reason, message string) {
	status := metav1.ConditionFalse
	if reason == ReasonProgrammed {
		status = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&r.Status.Conditions, metav1.Condition{Type: ReadyCondition, Status: status,
		Reason: reason, Message: message, ObservedGeneration: r.Generation})
	u, err := r.toUnstructured()
	if err == nil {
		var updated = u
		updated, err = s.client.UpdateStatus(ctx, u, metav1.UpdateOptions{})
		if err == nil {
			if fresh, ferr := fromUnstructured(updated); ferr == nil {
				*r = *fresh
			}
		}
	}
	if err != nil {
		statusErrors.Inc()
		s.log.Warn("the status of a DNSRecord cannot be written", "name", r.Name, "reason", reason, "err", err)
	}
}

// remove deletes the DNSRecord called name; one already gone is fine.
func (s *Store) remove(ctx context.Context, name string) error {
	err := s.client.Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting DNSRecord %s/%s: %w", s.namespace, name, err)
	}
	return nil
}

var (
	errConflict = errors.New("DNSRecord changed meanwhile")
	errForeign  = errors.New("DNSRecord of another owner")
)
