package events

import "errors"

// Errors a reader or writer of the bus tells apart.
var (
	// ErrUndecodable: the payload is not the event its schema or subject
	// says. The key's state is then unknown, never empty: nothing may be
	// deleted because of it.
	ErrUndecodable = errors.New("undecodable event")
	// ErrWrongSubject: the payload decodes but claims an identity (object,
	// name, provider, zone) other than its subject's.
	ErrWrongSubject = errors.New("event on the wrong subject")
	// ErrTooLarge: the event does not fit in one NATS message
	// (max_payload). Retrying cannot help until its content shrinks.
	ErrTooLarge = errors.New("event too large for the bus")
	// ErrPermissionDenied: the NATS server refused the subject to this
	// connection's credentials. Retrying cannot help until an operator
	// changes them (zonestream nats-config).
	ErrPermissionDenied = errors.New("permission denied by the NATS server")
	// ErrStreamFull: the stream holds as many messages or bytes as it may
	// and refuses a new key; every state it holds is kept. Retrying helps
	// once keys are deleted or an operator raises its limits.
	ErrStreamFull = errors.New("stream full")
	// ErrAdjust: the provider's applier could not adjust desired records
	// (adjust.go): none answers, or its provider failed. The names wait;
	// nothing is planned from unadjusted records.
	ErrAdjust = errors.New("records not adjusted by the provider")
	// ErrCutOff: a watch was not level with its stream for CutOffAfter
	// (cutoff.go); what its stage holds may include keys whose tombstones
	// expired unread. The stage starts over from the streams.
	ErrCutOff = errors.New("cut off from the stream for longer than a tombstone is sure to last")
)
