package main

import (
	"flag"
	"log/slog"
	"strings"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/kubestatus"
	"github.com/zonestream/zonestream/services/dedup"
	"github.com/zonestream/zonestream/services/planner"
	"github.com/zonestream/zonestream/services/portal"
	"github.com/zonestream/zonestream/stage"
)

// pipelineStage is one service of the pipeline: it registers its own flags and
// returns the constructor to call once they are parsed. Flags that several
// stages read (shared) are registered once by the caller.
type pipelineStage struct {
	name     string
	register func(fs *flag.FlagSet, shared *sharedFlags) func(*slog.Logger) (stage.Service, error)
	// usesShared says the stage reads the shared flags, so that a stage run
	// on its own offers them.
	usesShared bool
}

// sharedFlags are flags with one meaning in several stages.
type sharedFlags struct {
	managedRecordTypes stage.StringList
	heartbeat          time.Duration
	// standalone: one stage runs alone, so a stage registers the flags it
	// would otherwise read from another stage's.
	standalone bool
}

func (s *sharedFlags) register(fs *flag.FlagSet) {
	fs.Var(&s.managedRecordTypes, "managed-record-types",
		"record types to manage (repeatable; default A, AAAA, CNAME; add SRV for NodePort Services)")
	fs.DurationVar(&s.heartbeat, "heartbeat-interval", events.DefaultHeartbeat, events.HeartbeatUsage)
}

var stages = []pipelineStage{
	{"collector", func(fs *flag.FlagSet, shared *sharedFlags) func(*slog.Logger) (stage.Service, error) {
		var cfg collector.Config
		cfg.RegisterFlags(fs)
		if shared.standalone {
			cfg.RegisterOwnershipFlags(fs)
		}
		return func(l *slog.Logger) (stage.Service, error) {
			cfg.ManagedRecordTypes, cfg.Heartbeat = shared.managedRecordTypes, shared.heartbeat
			if !shared.standalone {
				cfg.Ownership = ownershipOf(fs) // the planner's --txt-* flags
			}
			return collector.New(cfg, l)
		}
	}, true},
	{"dedup", func(fs *flag.FlagSet, shared *sharedFlags) func(*slog.Logger) (stage.Service, error) {
		var cfg dedup.Config
		cfg.RegisterFlags(fs)
		return func(l *slog.Logger) (stage.Service, error) {
			cfg.Heartbeat = shared.heartbeat
			return dedup.New(cfg, l)
		}
	}, true},
	{"planner", func(fs *flag.FlagSet, shared *sharedFlags) func(*slog.Logger) (stage.Service, error) {
		var cfg planner.Config
		cfg.RegisterFlags(fs)
		return func(l *slog.Logger) (stage.Service, error) {
			cfg.ManagedRecordTypes = shared.managedRecordTypes
			return planner.New(cfg, l)
		}
	}, true},
	{"applier", func(fs *flag.FlagSet, _ *sharedFlags) func(*slog.Logger) (stage.Service, error) {
		var cfg applier.Config
		cfg.RegisterFlags(fs)
		return func(l *slog.Logger) (stage.Service, error) { return applier.New(cfg, l) }
	}, false},
	// The portal reads the streams and serves the page; it writes nothing.
	{"portal", func(fs *flag.FlagSet, _ *sharedFlags) func(*slog.Logger) (stage.Service, error) {
		var cfg portal.Config
		ownFlags := fs.Lookup("txt-owner-id") == nil
		cfg.RegisterFlags(fs)
		// In the all-in-one, the planner's owner id and domain filters.
		planner := func(name string) string {
			if f := fs.Lookup(name); f != nil {
				return f.Value.String()
			}
			return ""
		}
		return func(l *slog.Logger) (stage.Service, error) {
			if !ownFlags {
				cfg.OwnerID = planner("txt-owner-id")
				cfg.Filters = portal.Filters{Include: list(planner("domain-filter")), Exclude: list(planner("exclude-domains")),
					Regex: planner("regex-domain-filter"), RegexExclusion: planner("regex-domain-exclusion")}
			}
			return portal.New(cfg, l)
		}
	}, false},
}

func findStage(name string) (pipelineStage, bool) {
	for _, s := range stages {
		if s.name == name {
			return s, true
		}
	}
	return pipelineStage{}, false
}

// runStage runs one stage as its own process, exactly like its zs-* binary.
func runStage(st pipelineStage, args []string) error {
	return stage.MainArgs(st.name, args, st.standalone)
}

// standalone registers the stage's flags for a process of its own: its
// flags and the shared ones it reads.
func (st pipelineStage) standalone(fs *flag.FlagSet) func(*slog.Logger) (stage.Service, error) {
	shared := &sharedFlags{standalone: true}
	if st.usesShared {
		shared.register(fs)
	}
	return st.register(fs, shared)
}

// ownershipOf reads the planner's TXT registry flags for the collector.
func ownershipOf(fs *flag.FlagSet) kubestatus.Ownership {
	get := func(name string) string {
		if f := fs.Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	return kubestatus.Ownership{OwnerID: get("txt-owner-id"), Prefix: get("txt-prefix"),
		Suffix: get("txt-suffix"), WildcardReplacement: get("txt-wildcard-replacement")}
}

// list splits a repeatable flag's value.
func list(v string) []string {
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}
