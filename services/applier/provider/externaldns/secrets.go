package externaldns

import (
	"reflect"

	edns "sigs.k8s.io/external-dns/pkg/apis/externaldns"

	"github.com/zonestream/zonestream/stage"
)

// rememberSecrets remembers the value of every field ExternalDNS marks
// secure (`secure:"yes"`, which its own Config.String masks:
// --pdns-api-key, --rfc2136-tsig-secret, --godaddy-api-secret, ...): an
// ExternalDNS provider's error that echoes one is then redacted before it
// leaves the applier (provider.Redact).
func rememberSecrets(cfg *edns.Config) {
	v := reflect.ValueOf(cfg).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if f.Tag.Get("secure") == "yes" && f.Type.Kind() == reflect.String {
			stage.RememberSecret(v.Field(i).String())
		}
	}
}
