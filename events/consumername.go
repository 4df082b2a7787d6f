package events

import "crypto/rand"

// ConsumerNamePrefix returns a fresh name prefix for an ordered consumer
// (jetstream.OrderedConsumerConfig.NamePrefix): 128 bits from crypto/rand.
//
// NATS permissions match whole subject tokens, and a consumer's name is
// one token of the API subjects that pull from it or delete it
// ($JS.API.CONSUMER.MSG.NEXT.<stream>.<name>). So a reader allowed to
// pull from its own consumers may pull from any consumer of that stream
// whose name it knows. No identity may list consumers or see their
// advisories (events/permissions.go): the name is the only key to a
// consumer, and this makes it one nobody can guess. nats.go's default, a
// NUID, is unique but not meant to be secret.
func ConsumerNamePrefix() string { return rand.Text() }
