package collector

import (
	"github.com/zonestream/zonestream/services/collector/source"
	connectorsource "github.com/zonestream/zonestream/services/collector/source/connector"
	emptysource "github.com/zonestream/zonestream/services/collector/source/empty"
	unstructuredsource "github.com/zonestream/zonestream/services/collector/source/unstructured"
)

// The sources of no particular kind of object: unstructured (any
// resource the user names), connector (a TCP server's endpoints) and
// empty (none).
func init() {
	factories[unstructuredsource.Name] = func(c *Collector) (source.Source, error) {
		flags := c.cfg.Unstructured
		flags.TargetTemplate, flags.FQDNTargetTemplate = c.cfg.TargetTemplate, c.cfg.FQDNTargetTemplate
		return unstructuredsource.New(unstructuredsource.Options{
			Flags: flags, SharedOptions: c.sharedOptions(), APIOptions: c.apiOptions(), Namespace: c.cfg.Namespace,
		})
	}
	factories[connectorsource.Name] = func(c *Collector) (source.Source, error) {
		return connectorsource.New(connectorsource.Options{Flags: c.cfg.Connector, Logger: c.logger})
	}
	factories[emptysource.Name] = func(*Collector) (source.Source, error) { return emptysource.New(), nil }
	// Neither has objects in a namespace: with several --namespace, the
	// first namespace's collector alone runs them.
	clusterScoped = append(clusterScoped, connectorsource.Name, emptysource.Name)
}

// objectless are the sources whose states are no Kubernetes object: the
// pipeline's outcome has nowhere to go back to (no Event, no condition).
var objectless = []string{connectorsource.Name, emptysource.Name}

// referencer is a source that names its objects for Events itself (the
// unstructured source, whose objects' kinds discovery tells).
type referencer interface {
	Reference(key source.Key) (apiVersion, kind, name string, ok bool)
}
