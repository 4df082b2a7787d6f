package events

import (
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// StreamFullRefusals counts the publishes a stream refused because it was
// full. The server drops nothing it holds (DiscardNew): the refused key
// keeps its last state, and only this count and the publisher's log say
// that new keys are being turned away.
var StreamFullRefusals = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "zonestream_stream_full_total",
	Help: "publishes refused because their stream holds as many messages or bytes as it may, by stream",
}, []string{"stream"})

// jsStreamStoreFailed is nats-server's error code for a message it did
// not store; the description says why.
const jsStreamStoreFailed = 10077

// full returns err as ErrStreamFull, counted, when the stream refused the
// message on subject for its limits.
func full(subject string, err error) error {
	var api *jetstream.APIError
	if !errors.As(err, &api) || api.ErrorCode != jsStreamStoreFailed ||
		!strings.HasPrefix(api.Description, "maximum ") {
		return err
	}
	stream := StreamOf(subject)
	StreamFullRefusals.WithLabelValues(stream).Inc()
	return fmt.Errorf("%w: %s refused %s (%s): new keys are refused, every state it holds is kept; "+
		"delete keys or raise its limits (nats stream edit %s)", ErrStreamFull, stream, subject, api.Description, stream)
}

// StreamOf names the stream that stores subject, "" for none.
func StreamOf(subject string) string {
	for _, st := range Streams() {
		for _, f := range st.Subjects {
			if subjectMatches(f, subject) {
				return st.Name
			}
		}
	}
	if strings.HasPrefix(subject, "$KV."+BucketLeases+".") {
		return LeaseStream
	}
	return ""
}

// subjectMatches tells whether subject falls under filter, with NATS'
// wildcards.
func subjectMatches(filter, subject string) bool {
	f, s := strings.Split(filter, "."), strings.Split(subject, ".")
	for i, t := range f {
		switch {
		case t == ">":
			return len(s) > i
		case i >= len(s):
			return false
		case t != "*" && t != s[i]:
			return false
		}
	}
	return len(f) == len(s)
}
