package collector

import (
	"github.com/zonestream/zonestream/services/collector/source"
	ambassadorsource "github.com/zonestream/zonestream/services/collector/source/ambassador"
)

// The sources of ingress controllers' own resources (Ambassador, F5,
// Skipper, Gloo), each read through a lazy dynamic informer.
func init() {
	factories[ambassadorsource.Name] = func(c *Collector) (source.Source, error) {
		return ambassadorsource.New(ambassadorsource.Options{
			Flags: c.cfg.Ambassador, SharedOptions: c.sharedOptions(), APIOptions: c.apiOptions(), Namespace: c.cfg.Namespace,
		})
	}
}

// controllerKinds are the apiVersion and kind of each such source's
// objects, for the Events the collector records on them.
var controllerKinds = map[string][2]string{
	ambassadorsource.Name: {ambassadorsource.GroupVersion.String(), "Host"},
}
