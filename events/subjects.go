package events

import (
	"fmt"
	"slices"
	"strings"
)

// Subject prefixes of the streams (docs/internals/how-it-works.md; each stream in
// streams.go). A DNS name appears in a
// subject as its labels in reverse order, so that NATS wildcards select DNS
// subtrees: zs.desired.com.example.> is everything under example.com.
const (
	SubjectSources    = "zs.src"
	SubjectDesired    = "zs.desired"
	SubjectObserved   = "zs.observed"
	SubjectZones      = "zs.zones"
	SubjectPlans      = "zs.plan"
	SubjectResults    = "zs.result"
	SubjectDeadLetter = "zs.dlq"
	// SubjectHeld and SubjectApprovals: the mass-delete guard's holds
	// (planner) and an operator's approvals of them (held.go).
	SubjectHeld      = "zs.held"
	SubjectApprovals = "zs.approve"
)

// SourceSubject is where a collector publishes what one object wants.
func SourceSubject(cluster, source, namespace, name string) string {
	return join(SubjectSources, EscapeToken(cluster), EscapeToken(source), EscapeToken(namespace), EscapeToken(name))
}

// markerToken starts the subject tokens of the pipeline's own markers.
// EscapeToken never produces '~', so no object or DNS name can land on them.
const markerToken = "~"

// CollectorSubject is where one collector of a cluster says how far its run
// has got (events.CollectorState). collector is the collector's id within
// the cluster (CollectorID).
func CollectorSubject(cluster, collector string) string {
	return join(SubjectSources, EscapeToken(cluster), markerToken+"collector", EscapeToken(collector))
}

// ClaimSubject is where a cluster name is bound to one Kubernetes cluster
// (events.ClusterClaim).
func ClaimSubject(cluster string) string {
	return join(SubjectSources, EscapeToken(cluster), markerToken+"claim")
}

// DesiredCompleteSubject is where dedup says whether the desired stream is
// complete (events.DesiredComplete).
func DesiredCompleteSubject() string { return join(SubjectDesired, markerToken+"complete") }

// IsMarker reports whether subject is one of the pipeline's markers rather
// than the state of an object or a name.
func IsMarker(subject string) bool {
	for tok := range strings.SplitSeq(subject, ".") {
		if strings.HasPrefix(tok, markerToken) {
			return true
		}
	}
	return false
}

// ParseSourceSubject returns the object a sources-stream subject is about:
// the only identity dedup trusts, whatever the payload claims.
func ParseSourceSubject(subject string) (ObjectRef, error) {
	rest, ok := strings.CutPrefix(subject, SubjectSources+".")
	tokens := strings.Split(rest, ".")
	if !ok || len(tokens) != 4 || IsMarker(subject) {
		return ObjectRef{}, fmt.Errorf("subject %q is not zs.src.<cluster>.<source>.<namespace>.<name>", subject)
	}
	var parts [4]string
	for i, t := range tokens {
		v, err := UnescapeToken(t)
		if err != nil {
			return ObjectRef{}, fmt.Errorf("subject %q: %w", subject, err)
		}
		parts[i] = v
	}
	return ObjectRef{Cluster: parts[0], Source: parts[1], Namespace: parts[2], Name: parts[3]}, nil
}

// SourceFilter selects every object a collector of cluster publishes.
func SourceFilter(cluster string) string {
	return join(SubjectSources, EscapeToken(cluster), ">")
}

// DesiredSubject is where dedup publishes what is wanted at one name.
func DesiredSubject(dnsName string) string { return join(SubjectDesired, NameTokens(dnsName)) }

// ObservedSubject is where an applier publishes what its provider holds at one name.
func ObservedSubject(provider, dnsName string) string {
	return join(SubjectObserved, EscapeToken(provider), NameTokens(dnsName))
}

// ObservedFilter selects everything one provider holds.
func ObservedFilter(provider string) string {
	return join(SubjectObserved, EscapeToken(provider), ">")
}

// ZonesSubject is where an applier publishes the zones its provider manages.
func ZonesSubject(provider string) string { return join(SubjectZones, EscapeToken(provider)) }

// PlanSubject is where the planner queues changes for one zone of one provider.
func PlanSubject(provider, zone string) string {
	return join(SubjectPlans, EscapeToken(provider), NameTokens(zone))
}

// PlanFilter selects every plan for one provider.
func PlanFilter(provider string) string { return join(SubjectPlans, EscapeToken(provider), ">") }

// ResultSubject is where an applier reports the outcome of a plan.
func ResultSubject(provider, zone string) string {
	return join(SubjectResults, EscapeToken(provider), NameTokens(zone))
}

// HeldSubject is where the planner says which deletes of a zone it holds
// (events.HeldDeletes).
func HeldSubject(provider, zone string) string {
	return join(SubjectHeld, EscapeToken(provider), NameTokens(zone))
}

// ApprovalSubject is where an operator approves the deletes held in a zone
// (events.Approval).
func ApprovalSubject(provider, zone string) string {
	return join(SubjectApprovals, EscapeToken(provider), NameTokens(zone))
}

// DeadLetterSubject is where a service parks a message it could not decode.
func DeadLetterSubject(service string) string { return join(SubjectDeadLetter, EscapeToken(service)) }

// NameTokens renders a DNS name as subject tokens, labels reversed:
// "api.example.com" -> "com.example.api".
func NameTokens(dnsName string) string {
	labels := strings.Split(NormalizeName(dnsName), ".")
	slices.Reverse(labels)
	for i, l := range labels {
		labels[i] = EscapeToken(l)
	}
	return strings.Join(labels, ".")
}

// NameFromTokens is the inverse of NameTokens.
func NameFromTokens(tokens string) (string, error) {
	labels := strings.Split(tokens, ".")
	for i, t := range labels {
		l, err := UnescapeToken(t)
		if err != nil {
			return "", err
		}
		labels[i] = l
	}
	slices.Reverse(labels)
	return strings.Join(labels, "."), nil
}

// EscapeToken makes s a single valid subject token, reversibly. Letters,
// digits, '-' and '_' stand for themselves; every other byte, '.', '*', '>'
// and '%' among them, becomes %XX. The empty string becomes a lone "%".
func EscapeToken(s string) string {
	if s == "" {
		return "%"
	}
	if validPlain(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plainByte(c) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// UnescapeToken is the inverse of EscapeToken.
func UnescapeToken(t string) (string, error) {
	if t == "%" {
		return "", nil
	}
	if !strings.Contains(t, "%") {
		if !validPlain(t) {
			return "", fmt.Errorf("subject token %q has characters that are never left unescaped", t)
		}
		return t, nil
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c == '%':
			if i+2 >= len(t) {
				return "", fmt.Errorf("subject token %q: truncated escape", t)
			}
			hi, ok1 := unhex(t[i+1])
			lo, ok2 := unhex(t[i+2])
			if !ok1 || !ok2 {
				return "", fmt.Errorf("subject token %q: bad escape %q", t, t[i:i+3])
			}
			v := hi<<4 | lo
			if plainByte(v) {
				return "", fmt.Errorf("subject token %q: %q is escaped but needn't be", t, t[i:i+3])
			}
			b.WriteByte(v)
			i += 2
		case plainByte(c):
			b.WriteByte(c)
		default:
			return "", fmt.Errorf("subject token %q: unescaped %q", t, c)
		}
	}
	return b.String(), nil
}

func plainByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

func validPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainByte(s[i]) {
			return false
		}
	}
	return true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func join(parts ...string) string { return strings.Join(parts, ".") }
