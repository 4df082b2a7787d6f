package stage

import (
	"github.com/nats-io/nats.go"

	"github.com/zonestream/zonestream/events"
)

// ConnectOption changes how Connect reaches NATS and which streams it
// makes sure of.
type ConnectOption func(*connectOptions)

type connectOptions struct {
	streams []events.StreamOption
	nats    []nats.Option
}

// WithStreams passes opts on to events.EnsureStreams.
func WithStreams(opts ...events.StreamOption) ConnectOption {
	return func(o *connectOptions) { o.streams = append(o.streams, opts...) }
}

// InProcess reaches a NATS server running in this process through memory
// instead of a socket: the all-in-one's stages and its embedded JetStream
// then spend no syscalls and no loopback TCP on each message. The server
// still listens for the NATS CLI and other processes.
func InProcess(server nats.InProcessConnProvider) ConnectOption {
	return func(o *connectOptions) { o.nats = append(o.nats, nats.InProcessServer(server)) }
}
