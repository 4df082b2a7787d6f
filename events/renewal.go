package events

import (
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A stage that has just started trusts only marks published after it
// started (marks.go). Rather than wait up to a heartbeat for them, it asks
// their holders to renew them now, on a plain NATS subject no stream
// stores: the holders answer by publishing a fresh mark on the stream, so
// the answer is as live as a heartbeat and the safety rule is unchanged.
// dedup asks the collectors (RenewCollectorsSubject); the planner asks
// dedup (RenewCompleteSubject).

// SubjectRenew is the root of the renewal requests.
const SubjectRenew = "zs.renew"

// RenewCollectorsSubject is where dedup asks every collector to renew its
// mark now.
func RenewCollectorsSubject() string { return join(SubjectRenew, "collectors") }

// RenewCompleteSubject is where the planner asks dedup to renew its
// completeness mark now.
func RenewCompleteSubject() string { return join(SubjectRenew, "complete") }

// RequestRenewal asks the holders of the marks behind subject to renew
// them now. A request no one hears is no harm: the heartbeat comes anyway.
func RequestRenewal(js jetstream.JetStream, subject string) error {
	nc := js.Conn()
	if nc == nil {
		return nil
	}
	if err := nc.Publish(subject, nil); err != nil {
		return Denied(nc, subject, err)
	}
	return nil
}

// RenewalRequests delivers the renewal requests on subject until stop is
// called. Requests that come while one waits are one: a holder renews
// once for all of them, so asking cannot make it publish faster than it
// can renew.
func RenewalRequests(js jetstream.JetStream, subject string) (requests <-chan struct{}, stop func(), err error) {
	nc := js.Conn()
	ch := make(chan struct{}, 1)
	if nc == nil {
		return ch, func() {}, nil
	}
	sub, err := nc.Subscribe(subject, func(*nats.Msg) {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return nil, nil, Denied(nc, subject, err)
	}
	return ch, func() { _ = sub.Unsubscribe() }, nil
}
