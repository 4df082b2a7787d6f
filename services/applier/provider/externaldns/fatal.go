package externaldns

import (
	"errors"
	"fmt"
	"sync"

	"github.com/sirupsen/logrus"

	"github.com/zonestream/zonestream/services/applier/provider"
)

// ExternalDNS' constructors end the process when they cannot go on
// (aws' CreateDefaultV2Config calls logrus.Fatal when the AWS SDK refuses
// its environment: AWS_PROFILE naming no profile, AWS_MAX_ATTEMPTS not a
// number). That is right for ExternalDNS, which runs one provider, and
// wrong for declared providers: one team's bad Secret would stop every
// provider of the process. While a declared provider is built, logrus'
// exit panics instead, and the build returns the fatal message as its
// error.

// errFatal says a constructor called logrus.Fatal.
var errFatal = errors.New("the provider's constructor gave up (ExternalDNS would have exited)")

// fatalExit is what logrus' exit panics with during a guarded build.
type fatalExit struct{}

// lastFatal is the message of the last fatal entry logged (slogHook).
var lastFatal struct {
	sync.Mutex
	message string
}

func noteFatal(e *logrus.Entry) {
	if e.Level > logrus.FatalLevel {
		return
	}
	lastFatal.Lock()
	defer lastFatal.Unlock()
	lastFatal.message = e.Message
}

// withoutExit runs build with logrus' exit turned into an error. The
// caller serializes builds (envMu): logrus' ExitFunc is the process'.
func withoutExit[T any](build func() (T, error)) (out T, err error) {
	std := logrus.StandardLogger()
	prev := std.ExitFunc
	lastFatal.Lock()
	lastFatal.message = ""
	lastFatal.Unlock()
	std.ExitFunc = func(int) { panic(fatalExit{}) }
	defer func() {
		std.ExitFunc = prev
		r := recover()
		if r == nil {
			return
		}
		if _, ok := r.(fatalExit); !ok {
			panic(r)
		}
		lastFatal.Lock()
		msg := lastFatal.message
		lastFatal.Unlock()
		var zero T
		out, err = zero, configError(fmt.Errorf("%w: %s", errFatal, provider.Redact(msg)))
	}()
	return build()
}
