package applier

import (
	"time"
)

// DefaultProviderTimeout is --provider-timeout's default: longer than any
// call a healthy provider makes (a native provider's request times out
// after 5 to 10 s and is tried 4 times; ExternalDNS' providers page
// through large zones under their own rate limits), short enough that a
// provider which never answers holds the applier minutes, not for ever.
const DefaultProviderTimeout = 5 * time.Minute

// timedOut counts and logs a provider call abandoned at --provider-timeout
// (provider.Deadline): the call may still be running, cut off from the
// provider, and what it returns is dropped.
func (a *Applier) timedOut(op string, err error) {
	providerTimeouts.WithLabelValues(a.name, op).Inc()
	a.log.Warn("provider call abandoned at its deadline (--provider-timeout)", "op", op,
		"timeout", a.cfg.ProviderTimeout, "err", err)
}
