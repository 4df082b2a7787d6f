// Package events is the contract between zonestream's services: the Endpoint
// model, one event type per stream, the msgpack codec with self-describing
// headers, subject naming, content hashing and the stream definitions.
//
// Services import this package and nothing of each other; whatever two
// services need to agree on lives here.
package events
