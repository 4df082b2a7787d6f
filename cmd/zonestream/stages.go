package main

import (
	"flag"
	"log/slog"

	"github.com/zonestream/zonestream/events/service"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/dedup"
	"github.com/zonestream/zonestream/services/planner"
)

// stage is one service of the pipeline: it registers its own flags and
// returns the constructor to call once they are parsed.
type stage struct {
	name     string
	register func(fs *flag.FlagSet) func(*slog.Logger) (service.Service, error)
}

var stages = []stage{
	{"collector", func(fs *flag.FlagSet) func(*slog.Logger) (service.Service, error) {
		var cfg collector.Config
		cfg.RegisterFlags(fs)
		return func(l *slog.Logger) (service.Service, error) { return collector.New(cfg, l) }
	}},
	{"dedup", func(fs *flag.FlagSet) func(*slog.Logger) (service.Service, error) {
		var cfg dedup.Config
		cfg.RegisterFlags(fs)
		return func(l *slog.Logger) (service.Service, error) { return dedup.New(cfg, l) }
	}},
	{"planner", func(fs *flag.FlagSet) func(*slog.Logger) (service.Service, error) {
		var cfg planner.Config
		cfg.RegisterFlags(fs)
		return func(l *slog.Logger) (service.Service, error) { return planner.New(cfg, l) }
	}},
	{"applier", func(fs *flag.FlagSet) func(*slog.Logger) (service.Service, error) {
		var cfg applier.Config
		cfg.RegisterFlags(fs)
		return func(l *slog.Logger) (service.Service, error) { return applier.New(cfg, l) }
	}},
}

func findStage(name string) (stage, bool) {
	for _, s := range stages {
		if s.name == name {
			return s, true
		}
	}
	return stage{}, false
}

// runStage runs one stage as its own process, exactly like its zs-* binary.
func runStage(st stage, args []string) error {
	return service.MainArgs(st.name, args, st.register)
}
