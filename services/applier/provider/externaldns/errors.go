package externaldns

import (
	"errors"
	"fmt"
)

// ErrConfig is wrapped by every error about the ExternalDNS command line
// or building the provider from it.
var ErrConfig = errors.New("externaldns: bad provider configuration")

func configError(err error) error { return fmt.Errorf("%w: %w", ErrConfig, err) }
