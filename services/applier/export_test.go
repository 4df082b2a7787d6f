package applier

// ListingsDeferred is zonestream_applier_listings_deferred_total, for the
// tests outside the package.
var ListingsDeferred = listingsDeferred
