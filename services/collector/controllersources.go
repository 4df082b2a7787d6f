package collector

import (
	"github.com/zonestream/zonestream/services/collector/source"
	ambassadorsource "github.com/zonestream/zonestream/services/collector/source/ambassador"
	f5source "github.com/zonestream/zonestream/services/collector/source/f5"
	gloosource "github.com/zonestream/zonestream/services/collector/source/gloo"
	skippersource "github.com/zonestream/zonestream/services/collector/source/skipper"
)

// The sources of ingress controllers' own resources (Ambassador, F5,
// Skipper, Gloo), each read through lazy dynamic informers.
func init() {
	factories[ambassadorsource.Name] = func(c *Collector) (source.Source, error) {
		return ambassadorsource.New(ambassadorsource.Options{
			Flags: c.cfg.Ambassador, SharedOptions: c.sharedOptions(), APIOptions: c.apiOptions(), Namespace: c.cfg.Namespace,
		})
	}
	f5Options := func(c *Collector) f5source.Options {
		return f5source.Options{Flags: c.cfg.F5, SharedOptions: c.sharedOptions(), APIOptions: c.apiOptions(), Namespace: c.cfg.Namespace}
	}
	factories[f5source.VirtualServerName] = func(c *Collector) (source.Source, error) {
		return f5source.NewVirtualServerSource(f5Options(c))
	}
	factories[f5source.TransportServerName] = func(c *Collector) (source.Source, error) {
		return f5source.NewTransportServerSource(f5Options(c))
	}
	factories[gloosource.Name] = func(c *Collector) (source.Source, error) {
		return gloosource.New(gloosource.Options{Flags: c.cfg.Gloo, SharedOptions: c.sharedOptions(), APIOptions: c.apiOptions()})
	}
	factories[skippersource.Name] = func(c *Collector) (source.Source, error) {
		return skippersource.New(skippersource.Options{
			Flags: c.cfg.Skipper, SharedOptions: c.sharedOptions(), APIOptions: c.apiOptions(), Namespace: c.cfg.Namespace,
		})
	}
}

// controllerKinds are the apiVersion and kind of each such source's
// objects, for the Events the collector records on them.
var controllerKinds = map[string][2]string{
	ambassadorsource.Name:        {ambassadorsource.GroupVersion.String(), "Host"},
	f5source.VirtualServerName:   {f5source.GroupVersion.String(), "VirtualServer"},
	f5source.TransportServerName: {f5source.GroupVersion.String(), "TransportServer"},
	gloosource.Name:              {gloosource.ProxyGroupVersion.String(), "Proxy"},
}

// controllerKind is the apiVersion and kind of a source's objects, when
// it is one of these; skipper-routegroup's group/version is a flag.
func (c *Collector) controllerKind(sourceName string) (apiVersion, kind string, ok bool) {
	if sourceName == skippersource.Name {
		gv := c.cfg.Skipper.GroupVersion
		if gv == "" {
			gv = skippersource.DefaultGroupVersion
		}
		return gv, "RouteGroup", true
	}
	k, ok := controllerKinds[sourceName]
	return k[0], k[1], ok
}
