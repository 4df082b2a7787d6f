package applier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
)

// outcome is what became of a plan's changes.
type outcome struct {
	status  events.ResultStatus
	err     error
	applied []events.Change
	stale   []events.Change
	failed  []events.FailedChange
	abort   error // a transient error: stop trying the rest
}

// handlePlan applies one plan, publishes its result with the observed
// states it changed, acks, and stores those states while the next plan is
// taken (readback.go). Undecodable plans are dead-lettered.
func (a *Applier) handlePlan(ctx context.Context, js jetstream.JetStream, msg jetstream.Msg) {
	r, plan, ok := a.decodePlan(ctx, js, msg)
	if !ok {
		return
	}
	causation := r.EventID()
	zone := events.NormalizeName(plan.Zone)
	log := a.log.With("plan", plan.ID, "zone", zone, "changes", len(plan.Changes))
	debug := log.Enabled(ctx, slog.LevelDebug)
	if debug {
		log.Debug("plan taken", "seq", r.Seq, "pending", r.Pending)
	}
	if expired(&plan, time.Now()) {
		late := time.Since(time.UnixMilli(plan.NotAfterMillis)).Round(time.Millisecond)
		a.dropUnapplied(ctx, js, msg, &plan, zone, causation, events.ResultExpired,
			"plan reached the applier "+late.String()+" after its NotAfter; dropped unapplied")
		return
	}
	if plan.DryRun {
		a.dropUnapplied(ctx, js, msg, &plan, zone, causation, events.ResultDryRun,
			"a plan of a --dry-run planner; dropped unapplied")
		return
	}
	defer keepInProgress(msg, max(a.cfg.AckWait/3, time.Second))()

	managed := a.manages(ctx, zone)
	start := time.Now()
	if debug && !managed {
		log.Debug("zone not among the provider's zones: the plan fails whole")
	}
	out := a.applyPlan(ctx, &plan, zone, managed)
	applySeconds.WithLabelValues(a.name).Observe(time.Since(start).Seconds())
	if debug {
		logChanges(log, out)
	}
	if ctx.Err() != nil {
		return // not acked: redelivered to the next applier; re-applying is idempotent
	}
	rb := &readBack{} // nothing known: the plan's names wait for the next listing
	if managed {
		if got, err := a.readBack(ctx, zone, plan.Changes, causation); err == nil {
			rb = got
		}
	}
	res, err := a.publishResult(ctx, js, &plan, zone, out, rb, causation)
	a.storeLater(ctx, rb)
	if err != nil {
		log.Error("publishing the plan's result failed; the plan will be redelivered", "err", err)
		_ = msg.NakWithDelay(2 * time.Second)
		return
	}
	a.ack(ctx, js, msg)
	a.report(log, out, res, start)
}

// decodePlan reads the plan msg carries; false when it cannot be read,
// after parking it on the dead-letter subject (or asking for it again
// when that fails).
func (a *Applier) decodePlan(ctx context.Context, js jetstream.JetStream, msg jetstream.Msg) (events.Received, events.Plan, bool) {
	r := events.Received{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data()}
	if meta, err := msg.Metadata(); err == nil {
		r.Seq, r.Pending = meta.Sequence.Stream, meta.NumPending
	}
	var plan events.Plan
	err := events.Decode(r, &plan)
	if err == nil {
		return r, plan, true
	}
	a.log.Error("undecodable plan, parking it on the dead-letter subject", "subject", r.Subject, "seq", r.Seq, "err", err)
	if derr := events.DeadLetter(ctx, js, Name, r, err); derr != nil {
		a.log.Error("dead-lettering failed; will retry", "err", derr)
		_ = msg.NakWithDelay(2 * time.Second)
		return r, plan, false
	}
	deadLettersTotal.Inc()
	a.ack(ctx, js, msg)
	return r, plan, false
}

// keepInProgress keeps msg from being redelivered while the provider
// works, telling the server every interval; the function it returns stops.
func keepInProgress(msg jetstream.Msg, interval time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	return func() { close(done) }
}

// manages reports whether the provider manages zone, asking it when the
// zone is not among those it listed last.
func (a *Applier) manages(ctx context.Context, zone string) bool {
	if slices.Contains(a.zones, zone) {
		return true
	}
	zs, err := a.prov.Zones(ctx)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(zs, func(z string) bool { return events.NormalizeName(z) == zone })
}

// applyPlan applies a plan meant for this applier and a zone it manages;
// any other fails whole.
func (a *Applier) applyPlan(ctx context.Context, plan *events.Plan, zone string, managed bool) outcome {
	switch {
	case plan.Provider != "" && plan.Provider != a.name:
		return outcome{status: events.ResultFailed, err: fmt.Errorf("plan is for provider %q, this applier drives %q", plan.Provider, a.name)}
	case zone == "":
		return outcome{status: events.ResultFailed, err: errors.New("plan names no zone")}
	case !managed:
		return outcome{status: events.ResultFailed, err: fmt.Errorf("zone %q is not managed by provider %s", zone, a.name)}
	}
	if a.externalDNSMetrics() {
		lastReconcile.SetToCurrentTime()
	}
	return a.apply(ctx, zone, plan.Changes)
}

// publishResult publishes the plan's result, with what the provider now
// holds at its names (rb) and the observed stream's last sequence. When
// rb's states do not fit in the result, it stores them first, and the
// sequence covers them.
func (a *Applier) publishResult(ctx context.Context, js jetstream.JetStream, plan *events.Plan, zone string, out outcome, rb *readBack, causation string) (*events.Result, error) {
	res := &events.Result{PlanID: plan.ID, Provider: a.name, Zone: zone, Status: out.status,
		Failed: out.failed, Applied: len(out.applied), Observed: rb.states}
	if out.err != nil {
		res.Error = out.err.Error()
	}
	err := a.publishResultAfter(ctx, js, res, causation)
	if errors.Is(err, events.ErrTooLarge) && len(res.Observed) > 0 {
		resultsTooLarge.WithLabelValues(a.name).Inc()
		a.awaitObserved()
		_ = a.storeObserved(ctx, rb.batch)
		rb.batch, res.Observed = nil, nil
		err = a.publishResultAfter(ctx, js, res, causation)
	}
	return res, err
}

// publishResultAfter publishes res with the observed stream's last
// sequence. Observed states of other names, which earlier results
// carried, may still be storing.
func (a *Applier) publishResultAfter(ctx context.Context, js jetstream.JetStream, res *events.Result, causation string) error {
	// Reads the stream's info: one request, not two.
	stream, err := events.Resend(ctx, js.Conn(), func(ctx context.Context) (jetstream.Stream, error) {
		return js.Stream(ctx, events.StreamObserved)
	})
	if err != nil {
		return err
	}
	res.ObservedSeq = stream.CachedInfo().State.LastSeq
	_, _, err = events.Publish(ctx, js, events.ResultSubject(a.name, res.Zone), res, causation)
	return err
}

// report counts and logs what became of a plan.
func (a *Applier) report(log *slog.Logger, out outcome, res *events.Result, start time.Time) {
	plansTotal.WithLabelValues(a.name, string(out.status)).Inc()
	for _, c := range out.applied {
		changesTotal.WithLabelValues(a.name, c.Action(), "applied").Inc()
	}
	for _, c := range out.stale {
		changesTotal.WithLabelValues(a.name, c.Action(), "stale").Inc()
	}
	for _, f := range out.failed {
		changesTotal.WithLabelValues(a.name, f.Change.Action(), "failed").Inc()
	}
	attrs := []any{"status", out.status, "applied", len(out.applied), "failed", len(out.failed),
		"observed_seq", res.ObservedSeq, "took", time.Since(start).Round(time.Millisecond)}
	if len(out.applied) > 0 {
		a.appliedSinceListing.Store(true)
	}
	switch out.status {
	case events.ResultApplied:
		if a.externalDNSMetrics() {
			lastSync.SetToCurrentTime()
		}
		log.Info("plan applied", attrs...)
	case events.ResultStale:
		log.Info("plan is stale, nothing applied; the planner will re-plan", append(attrs, "reason", res.Error)...)
	default:
		logRejected(log, out.failed)
		log.Warn("plan not fully applied", append(attrs, "err", res.Error)...)
	}
}

// logRejected logs the failed changes one line per distinct error, with a
// few of the changes: a provider that is down fails every change of a plan
// for the same reason, and a line per change would bury the rest of the log.
func logRejected(log *slog.Logger, failed []events.FailedChange) {
	const examples = 5
	var order []string
	byErr := map[string][]string{}
	for _, f := range failed {
		if _, ok := byErr[f.Error]; !ok {
			order = append(order, f.Error)
		}
		byErr[f.Error] = append(byErr[f.Error], f.Change.String())
	}
	for _, e := range order {
		changes := byErr[e]
		log.Warn("changes rejected", "count", len(changes), "changes", changes[:min(len(changes), examples)], "err", e)
	}
}

func (a *Applier) ack(ctx context.Context, js jetstream.JetStream, msg jetstream.Msg) {
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// An ack lost with its server would hold every next plan (one is out
	// at a time) until the plan is sent again (AckWait): it is sent again
	// at once.
	_, err := events.Resend(actx, js.Conn(), func(ctx context.Context) (struct{}, error) { return struct{}{}, msg.DoubleAck(ctx) })
	if err != nil {
		a.log.Warn("acking a plan failed", "err", err)
	}
}

// apply applies changes; a batch the provider rejects as a whole is split
// in halves until the bad changes are isolated, so one bad record does not
// block the others.
func (a *Applier) apply(ctx context.Context, zone string, changes []events.Change) outcome {
	var out outcome
	if len(changes) == 0 {
		out.status = events.ResultApplied
		return out
	}
	err := a.prov.Apply(ctx, zone, changes)
	n := min(provider.AppliedCount(err), len(changes))
	out.applied = append(out.applied, changes[:n]...)
	rest := changes[n:]
	switch {
	case err == nil:
		a.providerOK()
		out.applied = changes
		out.status = events.ResultApplied
		return out
	case errors.Is(err, provider.ErrStale):
		a.providerOK()
		out.err = err
		if n == 0 {
			out.status = events.ResultStale
			out.stale = changes
			return out
		}
		for _, c := range rest {
			out.failed = append(out.failed, events.FailedChange{Change: c, Error: err.Error()})
			out.stale = append(out.stale, c)
		}
	case errors.Is(err, provider.ErrPermanent):
		a.providerOK()
		a.isolate(ctx, zone, rest, err, &out)
		if out.abort != nil {
			out.err = out.abort
		} else if len(out.failed) == 1 {
			out.err = errors.New(out.failed[0].Error)
		} else {
			out.err = fmt.Errorf("%d change(s) rejected", len(out.failed))
		}
	default:
		if ctx.Err() == nil {
			a.providerFailed("apply", err)
		}
		out.err = err
		for _, c := range rest {
			out.failed = append(out.failed, events.FailedChange{Change: c, Error: err.Error()})
		}
	}
	if len(out.applied) == 0 {
		out.status = events.ResultFailed
	} else {
		out.status = events.ResultPartial
	}
	return out
}

// isolate applies changes, known to hold a change the provider rejects
// permanently with err, in halves, recursively.
func (a *Applier) isolate(ctx context.Context, zone string, changes []events.Change, err error, out *outcome) {
	fail := func(cs []events.Change, err error) {
		for _, c := range cs {
			out.failed = append(out.failed, events.FailedChange{Change: c, Error: err.Error()})
		}
	}
	if len(changes) == 0 {
		return
	}
	if out.abort != nil || ctx.Err() != nil {
		fail(changes, cmpErr(out.abort, ctx.Err()))
		return
	}
	if len(changes) == 1 {
		fail(changes, err)
		return
	}
	mid := len(changes) / 2
	for _, half := range [][]events.Change{changes[:mid], changes[mid:]} {
		if out.abort != nil || ctx.Err() != nil {
			fail(half, cmpErr(out.abort, ctx.Err()))
			continue
		}
		e := a.prov.Apply(ctx, zone, half)
		if e == nil {
			out.applied = append(out.applied, half...)
			continue
		}
		n := min(provider.AppliedCount(e), len(half))
		out.applied = append(out.applied, half[:n]...)
		rest := half[n:]
		switch {
		case errors.Is(e, provider.ErrStale):
			out.stale = append(out.stale, rest...)
			fail(rest, e)
		case errors.Is(e, provider.ErrPermanent):
			a.isolate(ctx, zone, rest, e, out)
		default:
			if ctx.Err() == nil {
				a.providerFailed("apply", e)
			}
			out.abort = e
			fail(rest, e)
		}
	}
}

func cmpErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return errors.New("aborted")
}

// logChanges logs, at debug, what became of each change of a plan.
func logChanges(log *slog.Logger, out outcome) {
	for _, c := range out.applied {
		log.Debug("change applied", "change", c.String(), "targets", targetsOf(c))
	}
	if len(out.failed) == 0 { // else the stale ones are among the failed
		for _, c := range out.stale {
			log.Debug("change not applied: the provider holds other records than the plan expected (stale)", "change", c.String())
		}
	}
	for _, f := range out.failed {
		log.Debug("change failed", "change", f.Change.String(), "err", f.Error)
	}
}

// targetsOf is what a change leaves at its RRset: the new targets, none
// for a delete.
func targetsOf(c events.Change) []string {
	if c.New == nil {
		return nil
	}
	return c.New.Targets
}
