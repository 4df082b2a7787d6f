package registry

// With --registry=crd ownership lives in ExternalDNS' DNSRecord objects,
// not in DNS. The planner still plans ownership records, and the applier
// turns them into DNSRecords instead of writing them: both must place them
// alike, so in crd mode their names are fixed here, whatever --txt-prefix,
// --txt-suffix and --txt-wildcard-replacement say (those only ever shaped
// names written to DNS, and none are). Settings.Names gives them in crd
// mode, to the planner and to every reader of the observed state (the
// collector's status writer, the portal), which sees the virtual ones.

// RegistryCRD is --registry's value for ExternalDNS' CRD registry.
const RegistryCRD = "crd"

// CRDNames is where ownership records are placed in crd mode: the default
// names, a-www.example.org for A www.example.org.
func CRDNames() Names { return NewNames("", "", "") }
