// Command zs-applier runs zonestream's applier as its own process: it
// applies change plans to a DNS provider and publishes what the provider
// holds. Flags are ExternalDNS' provider flags plus the common service
// flags (--nats-url, --metrics-address, --log-level, --log-format).
package main

import (
	"flag"
	"log/slog"

	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/stage"
)

func main() {
	stage.Main(applier.Service, func(fs *flag.FlagSet) func(*slog.Logger) (stage.Service, error) {
		cfg := new(applier.Config)
		cfg.RegisterFlags(fs)
		return func(logger *slog.Logger) (stage.Service, error) {
			a, err := applier.New(*cfg, logger)
			if err != nil {
				return nil, err
			}
			return a, nil
		}
	})
}
