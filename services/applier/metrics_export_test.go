package applier

// ExternalDNS' controller metrics the applier keeps, for the tests outside
// the package.
var (
	LastSync              = lastSync
	LastReconcile         = lastReconcile
	ConsecutiveSoftErrors = consecutiveSoftErrors
	NoOpRuns              = noOpRuns
	RegistryErrors        = registryErrors
	RegistryByType        = registryByType
)
