package dnsprovider

// The reasons of the Ready condition (docs/platform-teams.md lists them).
const (
	// ReasonReady: the provider's zones were listed and published.
	ReasonReady = "ProviderReady"
	// ReasonStarting: its applier runs and has not listed it yet.
	ReasonStarting = "Starting"
	// ReasonInvalidSpec: the spec cannot be run (unknown provider, a
	// setting that is no flag of it, a ClusterDNSProvider's secretRef
	// without a namespace, ...); nothing runs for it.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonSecretNotFound: the Secret it names does not exist (or is in
	// a namespace this applier does not watch).
	ReasonSecretNotFound = "SecretNotFound"
	// ReasonSecretInSettings: a credential flag is in settings, where
	// everyone who reads the object sees it: it belongs in the Secret.
	ReasonSecretInSettings = "SecretInSettings"
	// ReasonProviderNotAvailable: the provider is not in this build
	// (ExternalDNS' providers need -tags externaldns), or failed to build.
	ReasonProviderNotAvailable = "ProviderNotAvailable"
	// ReasonListingFailed: the provider could not be listed; its names
	// wait for it (lastError says why).
	ReasonListingFailed = "ListingFailed"
	// ReasonRetiring: deletionPolicy Delete, being deleted: its records
	// are being deleted before the object goes.
	ReasonRetiring = "Retiring"
)

// refusal is why an object's provider is not run.
type refusal struct {
	reason, message string
}

func (r *refusal) Error() string { return r.reason + ": " + r.message }

func refuse(reason, message string) *refusal { return &refusal{reason: reason, message: message} }
