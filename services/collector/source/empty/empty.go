// Package empty holds the collector's empty source: ExternalDNS' source
// of no endpoints, a placeholder that lets a command line name a source
// without any record coming from it (see README.md beside this file).
//
// It is a source like the others to the collector: it is registered, it
// is synced at once, and its collector runs, renews its synced mark and
// holds its lease; it has no object, so it publishes nothing.
package empty

import (
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector/source"
)

// Name is the --source name.
const Name = "empty"

// Source is the empty source.
type Source struct{}

var _ source.Source = Source{}

// New returns the source.
func New() Source { return Source{} }

// Name implements source.Source.
func (Source) Name() string { return Name }

// Register implements source.Source: nothing to watch, synced at once.
func (Source) Register(informers.SharedInformerFactory, func(source.Key)) (cache.InformerSynced, error) {
	return func() bool { return true }, nil
}

// Endpoints implements source.Source: the source has no object, so a key
// (one published by an earlier run under this source's name, which only
// a hand-made message could be) names nothing that exists: its records
// are taken back.
func (Source) Endpoints(source.Key) ([]events.Endpoint, bool, []error) { return nil, false, nil }
