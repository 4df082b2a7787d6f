package stage

import (
	"slices"
	"sync"
)

// The secret values this process was configured with, so that text about
// to leave the process (an error on the bus, a log line) can be searched
// for them: a provider that echoes its API key or password in an error
// message would otherwise send it to every cluster.
var secretValues struct {
	sync.Mutex
	values []string
}

// minSecretLen is the shortest value remembered: a one- or two-character
// "secret" would mask that text in every message and guards nothing.
const minSecretLen = 4

// RememberSecret adds v to the values Secrets returns. Parse remembers
// every secret flag (SecretVar) it sets; code that reads a secret from
// elsewhere (an environment variable of its own) remembers it itself.
func RememberSecret(v string) {
	if len(v) < minSecretLen {
		return
	}
	secretValues.Lock()
	defer secretValues.Unlock()
	if !slices.Contains(secretValues.values, v) {
		secretValues.values = append(secretValues.values, v)
	}
}

// Secrets returns the secret values remembered so far.
func Secrets() []string {
	secretValues.Lock()
	defer secretValues.Unlock()
	return slices.Clone(secretValues.values)
}
