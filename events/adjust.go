package events

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// Some providers rewrite desired records before they are planned, as
// ExternalDNS' controller lets them (AdjustEndpoints): Route53 makes a
// CNAME to an ELB hostname an alias A and AAAA record and fills in its
// alias options. Only the provider's applier has the provider, so the
// planner asks it, with a plain NATS request that no stream stores, on
// AdjustSubject. An applier whose provider adjusts says so in its zone
// list (ZoneList.Adjusts); the planner asks no other.

// SubjectAdjust is the root of the adjust requests.
const SubjectAdjust = "zs.adjust"

// AdjustSubject is where the applier of provider answers adjust requests.
func AdjustSubject(provider string) string { return join(SubjectAdjust, EscapeToken(provider)) }

// AdjustQueue is the queue group the appliers of one provider answer in:
// one answer per request, whichever of them is up.
const AdjustQueue = "applier"

// AdjustRequest carries desired records to be adjusted.
type AdjustRequest struct {
	Provider  string     `msgpack:"provider" json:"provider"`
	Endpoints []Endpoint `msgpack:"endpoints" json:"endpoints"`
}

func (*AdjustRequest) Schema() Schema    { return Schema{"adjust-request", 1} }
func (r *AdjustRequest) subject() string { return AdjustSubject(r.Provider) }
func (r *AdjustRequest) canonicalize()   { SortEndpoints(r.Endpoints) }
func (*AdjustReply) Schema() Schema      { return Schema{"adjust-reply", 1} }
func (r *AdjustReply) subject() string   { return "" } // to the asker's inbox
func (r *AdjustReply) canonicalize()     { SortEndpoints(r.Endpoints) }
func (r *AdjustReply) failed() (bool, error) {
	return r.Error != "", fmt.Errorf("%w: %s", ErrAdjust, r.Error)
}

// AdjustReply is the records as the provider adjusted them, or why not.
type AdjustReply struct {
	Endpoints []Endpoint `msgpack:"endpoints" json:"endpoints"`
	Error     string     `msgpack:"error,omitempty" json:"error,omitempty"`
}

// Adjust asks the applier of provider to adjust eps. No applier up, a
// timeout, a refusal or an answer that does not decode is ErrAdjust.
func Adjust(ctx context.Context, nc *nats.Conn, provider string, eps []Endpoint) ([]Endpoint, error) {
	subject := AdjustSubject(provider)
	msg, err := Message(subject, &AdjustRequest{Provider: provider, Endpoints: eps}, "")
	if err != nil {
		return nil, err
	}
	answer, err := nc.RequestMsgWithContext(ctx, msg)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrAdjust, subject, Denied(nc, subject, err))
	}
	var r AdjustReply
	if err := Unmarshal(answer.Header, answer.Data, &r); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAdjust, err)
	}
	if r.Error != "" {
		return nil, fmt.Errorf("%w: %s: %s", ErrAdjust, subject, r.Error)
	}
	return r.Endpoints, nil
}

// ServeAdjust answers the adjust requests for provider with adjust, each
// under timeout, until stop is called. A request that does not decode, or
// that adjust fails, is answered with its error.
func ServeAdjust(nc *nats.Conn, provider string, timeout time.Duration,
	adjust func(context.Context, []Endpoint) ([]Endpoint, error)) (stop func(), err error) {
	subject := AdjustSubject(provider)
	sub, err := nc.QueueSubscribe(subject, AdjustQueue, func(m *nats.Msg) {
		var r AdjustReply
		var req AdjustRequest
		if err := Decode(Received{Subject: m.Subject, Header: m.Header, Data: m.Data}, &req); err != nil {
			r.Error = err.Error()
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			r.Endpoints, err = adjust(ctx, req.Endpoints)
			cancel()
			if err != nil {
				r.Endpoints, r.Error = nil, err.Error()
			}
		}
		if m.Reply == "" {
			return
		}
		out, err := Message(m.Reply, &r, m.Header.Get(HeaderEventID))
		if err != nil {
			out, _ = Message(m.Reply, &AdjustReply{Error: err.Error()}, "")
		}
		_ = nc.PublishMsg(out)
	})
	if err != nil {
		return nil, Denied(nc, subject, err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}
