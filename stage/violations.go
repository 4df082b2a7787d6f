package stage

import (
	"errors"
	"log/slog"
	"regexp"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// PermissionViolations counts what the NATS server refused this process
// (its asynchronous "-ERR 'Permissions Violation ...'"). The server drops
// the refused message and says so only on this side channel: without the
// count, a misconfigured or compromised process would only look slow.
var PermissionViolations = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "zonestream_nats_permission_violations_total",
	Help: "operations the NATS server refused to this process' credentials, by operation (publish, subscribe)",
}, []string{"operation"})

// asyncErrors returns the handler of the errors NATS reports out of band:
// a permission violation is counted and logged as an error naming the
// subject; anything else is logged as a warning. inboxPrefix is the
// process' --nats-inbox-prefix: a refused inbox is nearly always that flag
// missing, and the log says so.
func asyncErrors(logger *slog.Logger, inboxPrefix string) nats.ErrHandler {
	return func(_ *nats.Conn, sub *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			op, subject := violation(err)
			PermissionViolations.WithLabelValues(op).Inc()
			attrs := []any{"operation", op, "subject", subject, "err", err}
			if op == "subscribe" && inboxPrefix != "" && strings.HasPrefix(subject, inboxPrefix+".") {
				attrs = append(attrs, "hint", "replies to this process are refused: give it the --nats-inbox-prefix "+
					"zonestream nats-config printed for its identity")
			}
			logger.Error("NATS refused an operation to these credentials: permissions violation", attrs...)
			return
		}
		attrs := []any{"err", err}
		if sub != nil {
			attrs = append(attrs, "subject", sub.Subject)
		}
		logger.Warn("NATS reported an error", attrs...)
	}
}

// violationSubject finds the subject in the server's wording: Permissions
// Violation for Publish to "SUBJECT", for Subscription to "SUBJECT".
var violationSubject = regexp.MustCompile(`(?i)for (publish|subscription) to "([^"]*)"`)

// violation tells a refused publish from a refused subscription, and
// which subject was refused.
func violation(err error) (operation, subject string) {
	m := violationSubject.FindStringSubmatch(err.Error())
	if m == nil {
		return "other", ""
	}
	if strings.EqualFold(m[1], "publish") {
		return "publish", m[2]
	}
	return "subscribe", m[2]
}
