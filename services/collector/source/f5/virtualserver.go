package f5

// VirtualServerName is the --source name of the VirtualServer source.
const VirtualServerName = "f5-virtualserver"

// NewVirtualServerSource returns the f5-virtualserver source: one state
// per VirtualServer. It does no I/O.
func NewVirtualServerSource(opts Options) (*ServerSource, error) {
	return newServerSource(VirtualServerName, "VirtualServer", opts)
}
