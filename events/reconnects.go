package events

import "github.com/nats-io/nats.go/jetstream"

// Reconnects counts the times js's connection reconnected. A server that
// restarted (kill -9, a crash) may have lost the last messages it had
// acknowledged; a stage that sees this count change compares what it
// believes it published with what the stream holds, and publishes the
// difference again.
func Reconnects(js jetstream.JetStream) uint64 {
	if nc := js.Conn(); nc != nil {
		return nc.Stats().Reconnects
	}
	return 0
}
