package planner

import (
	"strings"

	"github.com/zonestream/zonestream/events"
)

// unknownNames are the names whose last message could not be decoded (or
// came on the wrong subject). Their state is unknown, which is not empty:
// a desired state we cannot read is not "nothing wanted", and an observed
// state we cannot read is not "the provider holds nothing". Such a name is
// planned for no provider at all until a readable state arrives for it.
type unknownNames struct {
	desired  map[string]bool            // by DNS name
	observed map[string]map[string]bool // provider -> DNS name
}

func newUnknownNames() unknownNames {
	return unknownNames{desired: map[string]bool{}, observed: map[string]map[string]bool{}}
}

// desiredName is the DNS name a zs.desired.<reversed name> subject speaks
// for; ok is false for a marker or a subject that names none.
func desiredName(subject string) (string, bool) {
	tokens, ok := strings.CutPrefix(subject, events.SubjectDesired+".")
	if !ok || events.IsMarker(subject) {
		return "", false
	}
	name, err := events.NameFromTokens(tokens)
	return name, err == nil && name != ""
}

// observedName is the provider and DNS name of a
// zs.observed.<provider>.<reversed name> subject.
func observedName(subject string) (provider, name string, ok bool) {
	rest, ok := strings.CutPrefix(subject, events.SubjectObserved+".")
	if !ok {
		return "", "", false
	}
	tok, tokens, ok := strings.Cut(rest, ".")
	if !ok {
		return "", "", false
	}
	provider, err := events.UnescapeToken(tok)
	if err != nil {
		return "", "", false
	}
	name, err = events.NameFromTokens(tokens)
	return provider, name, err == nil && name != ""
}

// markUnknown records that the message m, which could not be decoded, left
// its name's state unknown, and returns that name ("" when the subject
// names none: then there is no state it could have replaced).
func (r *run) markUnknown(m events.Received) string {
	switch {
	case on(m.Subject, events.SubjectDesired):
		name, ok := desiredName(m.Subject)
		if !ok {
			return ""
		}
		r.unknown.desired[name] = true
		delete(r.desired, name)
		return name
	case on(m.Subject, events.SubjectObserved):
		provider, name, ok := observedName(m.Subject)
		if !ok {
			return ""
		}
		if r.unknown.observed[provider] == nil {
			r.unknown.observed[provider] = map[string]bool{}
		}
		r.unknown.observed[provider][name] = true
		delete(r.observed[provider], name)
		for _, owner := range r.registryOwners(name) {
			r.mark(owner, m.EventID())
		}
		return name
	}
	return ""
}

// known reports whether everything planName would read to plan name for
// provider is known: the desired state at the name, and the observed state
// at the name and at every name its ownership records may live at.
func (r *run) known(provider, name string) bool {
	if r.unknown.desired[name] {
		return false
	}
	unknownObs := r.unknown.observed[provider]
	if len(unknownObs) == 0 {
		return true
	}
	if unknownObs[name] {
		return false
	}
	if r.reg.noop {
		return true
	}
	if unknownObs[r.reg.names.OldTXTName(name)] {
		return false
	}
	for _, t := range r.managed {
		if unknownObs[r.reg.names.TXTName(name, t)] {
			return false
		}
	}
	return true
}

// unknownCount is how many names are unknown, for the gauge.
func (u unknownNames) count() int {
	n := len(u.desired)
	for _, byName := range u.observed {
		n += len(byName)
	}
	return n
}
