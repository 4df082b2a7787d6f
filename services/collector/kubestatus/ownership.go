package kubestatus

import "github.com/zonestream/zonestream/events/registry"

// registryNames are the names of the ownership TXT records that may cover
// a record of recordType at name: ExternalDNS' new format, then the old
// one (one TXT for every type).
func (b *book) registryNames(name, recordType string) [2]string {
	return [2]string{b.names.TXTName(name, recordType), b.names.OldTXTName(name)}
}

// registryResource returns the resource (kind/namespace/name) an
// ownership TXT string names, "" for none.
func registryResource(txt string) string {
	l, _ := registry.Parse(txt)
	return l.Resource
}
