package f5

// TransportServerName is the --source name of the TransportServer source.
const TransportServerName = "f5-transportserver"

// NewTransportServerSource returns the f5-transportserver source: one
// state per TransportServer (the same rules; a TransportServer has no
// hostAliases). It does no I/O.
func NewTransportServerSource(opts Options) (*ServerSource, error) {
	return newServerSource(TransportServerName, "TransportServer", opts)
}
