package applier

// ListingsDeferred is zonestream_applier_listings_deferred_total and
// ProviderErrors zonestream_applier_provider_errors_total, and
// ProviderTimeouts zonestream_applier_provider_timeouts_total, for the
// tests outside the package.
var (
	ListingsDeferred = listingsDeferred
	ProviderErrors   = providerErrorsTotal
	ProviderTimeouts = providerTimeouts
)
