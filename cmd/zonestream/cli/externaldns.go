//go:build externaldns

package cli

import "github.com/zonestream/zonestream/services/applier/provider/externaldns"

// Built with -tags externaldns, the applier (alone or in the all-in-one)
// also drives every provider of ExternalDNS, --provider=aws, google,
// azure, cloudflare, ..., each with ExternalDNS' own flags. Without the
// tag, zonestream links none of their SDKs. So do DNSProvider objects
// naming them (externaldns.Declared builds each with its own Secret).
func init() {
	applierStage = externaldns.ApplierStage
	declaredBuilder = externaldns.Declared
}
