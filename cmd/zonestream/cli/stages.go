package cli

import (
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/dnsprovider"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/dedup"
	"github.com/zonestream/zonestream/services/planner"
	"github.com/zonestream/zonestream/services/portal"
	"github.com/zonestream/zonestream/stage"
)

// stages are the pipeline's stages in the order the all-in-one starts
// them; each is wired in its own package, once, for the all-in-one and
// for `zonestream <stage>` alike.
var stages = []func() stage.Definition{collector.Stage, dedup.Stage, planner.Stage,
	func() stage.Definition { return dnsprovider.Stage(applierStage(), declaredBuilder) }, portal.Stage}

// applierStage is the applier's wiring. A build with -tags externaldns
// replaces it (externaldns.go) by one whose --provider also names every
// provider of ExternalDNS.
var applierStage = applier.Stage

// declaredBuilder builds the providers of DNSProvider objects that are
// not zonestream's own (--dnsproviders): nil refuses them. A build with
// -tags externaldns sets ExternalDNS' (externaldns.go).
var declaredBuilder dnsprovider.Builder

// Stages are the pipeline's stages, in the order the all-in-one starts
// them.
func Stages() []stage.Definition {
	defs := make([]stage.Definition, len(stages))
	for i, def := range stages {
		defs[i] = def()
	}
	return defs
}

// FindStage is the stage a command names.
func FindStage(name string) (stage.Definition, bool) {
	for _, def := range stages {
		if d := def(); d.Name == name {
			return d, true
		}
	}
	return stage.Definition{}, false
}
