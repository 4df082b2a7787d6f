package inmemory

import (
	"errors"
	"flag"
	"fmt"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/stage"
)

// Name is the provider's --provider value and subject token.
const Name = "inmemory"

// Config holds the provider's flags.
type Config struct {
	Zones stage.StringList
}

// RegisterFlags registers --inmemory-zone.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.Var(&c.Zones, "inmemory-zone", "a zone the inmemory provider manages (repeatable, or comma-separated)")
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if len(c.Zones) == 0 {
		return errors.New("inmemory: at least one --inmemory-zone is required")
	}
	for _, z := range c.Zones {
		if events.NormalizeName(z) == "" {
			return fmt.Errorf("inmemory: empty --inmemory-zone")
		}
	}
	return nil
}
