package connector

import (
	"encoding/gob"
	"fmt"
	"io"

	"github.com/zonestream/zonestream/events"
)

// wireEndpoint is ExternalDNS' endpoint.Endpoint as gob carries it: gob
// matches struct fields by name, so these fields (ExternalDNS v0.21 to
// v0.23 have the same exported ones) read what ExternalDNS' type wrote.
type wireEndpoint struct {
	DNSName          string
	Targets          []string
	RecordType       string
	SetIdentifier    string
	RecordTTL        int64
	Labels           map[string]string
	ProviderSpecific []wireProperty
}

type wireProperty struct {
	Name, Value string
}

// Decode reads one answer of a connector server: a gob-encoded list of
// endpoints. Labels are not kept: in ExternalDNS they are the registry's
// (owner, resource), which the planner sets.
func Decode(r io.Reader) ([]events.Endpoint, error) {
	var wire []*wireEndpoint
	if err := gob.NewDecoder(r).Decode(&wire); err != nil {
		return nil, fmt.Errorf("decoding the endpoint list: %w", err)
	}
	out := make([]events.Endpoint, 0, len(wire))
	for _, w := range wire {
		if w == nil {
			continue
		}
		ep := events.Endpoint{DNSName: w.DNSName, RecordType: w.RecordType, Targets: w.Targets,
			SetIdentifier: w.SetIdentifier, RecordTTL: w.RecordTTL}
		for _, p := range w.ProviderSpecific {
			ep.ProviderSpecific = append(ep.ProviderSpecific, events.ProviderSpecificProperty{Name: p.Name, Value: p.Value})
		}
		out = append(out, ep)
	}
	return out, nil
}
