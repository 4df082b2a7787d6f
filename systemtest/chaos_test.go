package systemtest

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
	"github.com/zonestream/zonestream/testenv/walkthrough"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// The chaos command: during a burst of changes, kill -9 one
// stage or the NATS server at a random moment, start it again, and check
// that nothing wanted was deleted, nothing was lost, and DNS converged.
// The defaults are CI-sized; hack/chaos.sh passes the full run's flags:
//
//	hack/chaos.sh -chaos.trials=100 -chaos.changes=10000
var (
	// 5: each victim once (see the order below), about a minute here.
	chaosTrials   = flag.Int("chaos.trials", 5, "chaos: number of trials")
	chaosChanges  = flag.Int("chaos.changes", 2000, "chaos: changes (creates, address changes, deletes) per trial")
	chaosStable   = flag.Int("chaos.stable", 200, "chaos: Services that exist through every trial")
	chaosSeed     = flag.Int64("chaos.seed", 0, "chaos: seed of the draws (0: from the clock; the log gives it)")
	chaosVictims  = flag.String("chaos.victims", "collector,dedup,planner,applier,nats", "chaos: what may be killed")
	chaosMaxDown  = flag.Duration("chaos.max-down", 3*time.Second, "chaos: longest pause between kill and restart")
	chaosConverge = flag.Duration("chaos.converge", 2*time.Minute, "chaos: bound on convergence after each burst")
	chaosBurstMax = flag.Duration("chaos.burst-timeout", 10*time.Minute, "chaos: bound on one burst's changes")
	chaosHistory  = flag.Int("chaos.history", 0, "chaos: objects created, changed and deleted on the bus before the first trial (a long run's history)")
	// 15s: a restart is a replay of the streams and a round trip for
	// fresh marks (its lease it takes back at once); a NATS restart is
	// JetStream's recovery and the watches' reconnection; anything longer
	// is a stage waiting for something it should not.
	chaosBound = flag.Duration("chaos.bound", 15*time.Second, "chaos: a trial fails if DNS converges later than this after the burst's last change")
)

const chaosMinDown = 100 * time.Millisecond

// chaosEnv is what every trial runs against: one cluster, one BIND, one
// NATS server behind its gate, the four stages, and the checks.
type chaosEnv struct {
	cluster *kube.Cluster
	kc      kubernetes.Interface // the cluster's, without the apiserver's warnings
	ns      *bind.Server
	zone    string
	owner   string
	nats    *natsProcess
	gate    *natsGate
	tap     *chaosTap
	stages  map[string]*process
	ledger  *wantedLedger
	base    []string // the zone between trials: its own records, the planted one, the stable Services
}

// TestChaos is the chaos command; see the flags above. It fails if any
// trial deletes something wanted, loses a record or does not converge.
func TestChaos(t *testing.T) {
	const zone, owner = "chaos.test", "chaos"
	victims := strings.Split(*chaosVictims, ",")
	for _, v := range victims {
		if _, ok := cli.FindStage(v); !ok && v != "nats" {
			t.Fatalf("-chaos.victims: unknown victim %q", v)
		}
	}
	if *chaosChanges < 1 || *chaosTrials < 1 || *chaosMaxDown < chaosMinDown {
		t.Fatalf("-chaos.changes and -chaos.trials must be positive, -chaos.max-down at least %s", chaosMinDown)
	}
	seed := *chaosSeed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	t.Logf("seed %d (-chaos.seed=%d draws the same trials)", seed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))

	env := &chaosEnv{cluster: kube.StartT(t), ns: bind.StartT(t, zone), zone: zone, owner: owner,
		ledger: newWantedLedger(zone)}
	// The apiserver warns that an ExternalName Service's externalIPs are
	// ignored (the service source reads them, as ExternalDNS does: see
	// runOp); once per change, that would bury the table.
	cfg := rest.CopyConfig(env.cluster.Config)
	cfg.WarningHandler = rest.NoWarnings{}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	env.kc = kc
	setupStart := time.Now()
	if err := walkthrough.Plant(env.ns, zone, "legacy."+zone+". 300 IN A 192.0.2.99"); err != nil {
		t.Fatal(err)
	}
	env.ledger.wanted("legacy", setupStart)
	env.nats = startNATSProcess(t, buildNATSServer(t))
	env.gate = startNATSGate(t, env.nats.addr)
	env.tap = connectTap(t, env.nats.url())
	prefillHistory(t, env.nats.url(), "chaos", zone, "rfc2136", *chaosHistory)
	env.stages = startChaosStages(t, env.gate.url(), env.cluster, env.ns, zone, owner)

	ctx, cancel := context.WithTimeout(context.Background(), *chaosConverge)
	defer cancel()
	if err := createServices(ctx, env.kc, zone, 0, *chaosStable); err != nil {
		t.Fatal(err)
	}
	for i := range *chaosStable {
		env.ledger.wanted("svc-"+strconv.Itoa(i), setupStart)
	}
	env.base = burstZone(zone, owner, *chaosStable)
	if _, got, ok, err := awaitZone(env.ns, zone, env.base, *chaosConverge); err != nil || !ok {
		missing, extra := diff(env.base, got)
		t.Fatalf("stable Services not in BIND after %s (%v): missing %v, unexpected %v", *chaosConverge, err, head(missing), head(extra))
	}
	t.Logf("%d stable Services in BIND %s after the stages started", *chaosStable, time.Since(setupStart).Round(time.Millisecond))

	// Victims in a random order, each once before any comes again, so that
	// a few trials still try different ones.
	var order []string
	var rows []chaosTrial
	since := setupStart
	for i := range *chaosTrials {
		if len(order) == 0 {
			order = slices.Clone(victims)
			rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
		}
		victim := order[0]
		order = order[1:]
		row := env.trial(t, i, victim, rng, since)
		since = row.end
		rows = append(rows, row)
		t.Logf("trial %d: %s", i, row.summary())
		if row.err != nil || !row.cleaned {
			break // the zone is not back to its base: later trials would measure this one
		}
	}
	t.Logf("\n%s\n%s", chaosTable(rows), victimTable(rows))
	for _, r := range rows {
		if r.failed() {
			r.report(t)
		}
	}
}

// startChaosStages runs the four stages as separate processes
// (startStages: marks renewed every second), by name.
func startChaosStages(t *testing.T, natsURL string, cluster *kube.Cluster, ns *bind.Server, zone, owner string) map[string]*process {
	// A trial deletes most of what it creates, and the whole rest at its
	// end: the mass-delete guard would rightly hold that.
	//
	// Each stage is restarted as a container in its pod is: under the
	// same identity, which takes its lease back at once (events/leader).
	// So the lease can have its default timing, whose renew deadline
	// (10s) a NATS restart does not reach: it deposes no one.
	extra := map[string][]string{}
	for _, name := range []string{"collector", "dedup", "planner", "applier"} {
		extra[name] = append([]string{"--leader-elect-identity=chaos-" + name}, defaultLease...)
	}
	p := startStagesWith(t, natsURL, cluster, "chaos", append(rfc2136Flags(ns, zone, owner), noDeleteLimits...), extra, "--interval=5s")
	out := map[string]*process{}
	for _, st := range p.stages {
		out[st.name] = st
	}
	return out
}

func (e *chaosEnv) kill(victim string) {
	if victim == "nats" {
		e.gate.setOpen(false)
		e.nats.kill()
		return
	}
	e.stages[victim].kill()
}

func (e *chaosEnv) restart(victim string) error {
	if victim == "nats" {
		e.nats.start()
		if err := e.tap.resubscribed(); err != nil {
			return err
		}
		e.gate.setOpen(true)
		return nil
	}
	e.stages[victim].start()
	return nil
}

// chaosTrial is one trial's row.
type chaosTrial struct {
	n, changes  int
	victim      string
	killAfter   int           // changes done when the victim was killed
	killAt      time.Duration // since the burst started
	down        time.Duration
	burst       time.Duration // how long the changes took
	deletes     int           // deletes the tap saw, wrongful or not
	wrongful    []tappedDelete
	lost, extra []string // after the convergence bound, if not converged
	gaps        []string // base records seen missing during the trial
	untapped    []string // plans the applier reported that the tap never saw
	converged   bool
	converge    time.Duration // restart -> BIND as wanted
	afterBurst  time.Duration // last change -> BIND as wanted
	cleaned     bool          // survivors deleted, zone back to its base
	err         error
	end         time.Time
}

func (e *chaosEnv) trial(t *testing.T, n int, victim string, rng *rand.Rand, since time.Time) (row chaosTrial) {
	row = chaosTrial{n: n, victim: victim, changes: *chaosChanges}
	// Every delete seen since the last trial is judged, however this one
	// ends.
	defer func() {
		row.end = time.Now()
		seen := e.tap.deletesBetween(since, row.end)
		row.deletes = len(seen)
		for _, d := range seen {
			if e.ledger.wrongful(d) {
				row.wrongful = append(row.wrongful, d)
			}
		}
	}()
	ops, survivors := drawBurst(rng, "t"+strconv.Itoa(n), *chaosChanges)
	row.killAfter = rng.IntN(len(ops))
	row.down = chaosMinDown + time.Duration(rng.Int64N(int64(*chaosMaxDown-chaosMinDown)+1))

	ctx, cancel := context.WithTimeout(context.Background(), *chaosBurstMax+3**chaosConverge)
	defer cancel()
	resultsFrom, err := e.tap.resultsSeq(ctx)
	if err != nil {
		row.err = fmt.Errorf("reading the results stream: %w", err)
		return row
	}
	stopWatch := watchZone(e.ns, e.zone, e.base)

	// The burst runs in the background; this goroutine kills and restarts
	// (process helpers may fail the test, which only this one may do).
	burstCtx, cancelBurst := context.WithTimeout(ctx, *chaosBurstMax)
	defer cancelBurst()
	var done atomic.Int64
	var burstEnd time.Time
	burstErr := make(chan error, 1)
	start := time.Now()
	go func() {
		err := runBurst(burstCtx, e.kc, e.zone, ops, e.ledger, &done)
		burstEnd = time.Now()
		burstErr <- err
	}()
	finished := false
	for done.Load() < int64(row.killAfter) && !finished {
		select {
		case err = <-burstErr:
			finished = true
		case <-time.After(2 * time.Millisecond):
		}
	}
	row.killAfter = int(done.Load())
	row.killAt = time.Since(start)
	e.kill(victim)
	time.Sleep(row.down)
	restartErr := e.restart(victim)
	restarted := time.Now()
	if !finished {
		err = <-burstErr // bounded by burstCtx
	}
	row.burst = burstEnd.Sub(start)
	if err == nil {
		err = restartErr
	}
	if err != nil {
		row.gaps = stopWatch()
		row.err = err
		return row
	}

	want := sorted(append(slices.Clone(e.base), volatileZone(e.owner, survivors)...))
	_, got, ok, err := awaitZone(e.ns, e.zone, want, *chaosConverge)
	matched := time.Now()
	switch {
	case err != nil:
		row.err = err
	case ok:
		row.converged = true
		row.converge, row.afterBurst = matched.Sub(restarted), matched.Sub(burstEnd)
	default:
		row.lost, row.extra = diff(want, got)
	}

	// Back to the base for the next trial; the deletes are checked too.
	if err := deleteServices(ctx, e.kc, slices.Collect(maps.Keys(survivors)), e.ledger); err != nil {
		row.err = fmt.Errorf("deleting the survivors: %w", err)
	} else if _, got, ok, err := awaitZone(e.ns, e.zone, e.base, *chaosConverge); err != nil {
		row.err = err
	} else if row.cleaned = ok; !ok {
		missing, extra := diff(e.base, got)
		row.err = fmt.Errorf("zone not back to its base after the survivors' deletes: missing %v, unexpected %v",
			head(missing), head(extra))
	}
	row.gaps = stopWatch()
	if row.untapped, err = e.tap.untapped(ctx, resultsFrom); err != nil && row.err == nil {
		row.err = fmt.Errorf("cross-checking the tap: %w", err)
	}
	return row
}

func (r chaosTrial) failed() bool {
	return r.err != nil || !r.converged || r.afterBurst > *chaosBound || !r.cleaned ||
		len(r.wrongful)+len(r.lost)+len(r.gaps)+len(r.untapped) > 0
}

func (r chaosTrial) summary() string {
	s := fmt.Sprintf("%s killed after %d/%d changes (+%s), down %s; %d wrongful deletes, %d records lost",
		r.victim, r.killAfter, r.changes, r.killAt.Round(time.Millisecond), r.down.Round(time.Millisecond),
		len(r.wrongful), len(r.lost))
	if r.converged {
		s += fmt.Sprintf(", converged %s after the restart (%s after the last change)",
			r.converge.Round(time.Millisecond), r.afterBurst.Round(time.Millisecond))
		if r.afterBurst > *chaosBound {
			s += fmt.Sprintf(", over the bound of %s", *chaosBound)
		}
	} else {
		s += ", NOT converged"
	}
	if r.err != nil {
		s += "; " + r.err.Error()
	}
	return s
}

// report fails the test with what a developer needs to reproduce the trial.
func (r chaosTrial) report(t *testing.T) {
	t.Helper()
	t.Errorf("trial %d (%s killed after %d changes, %s into the burst, down %s) failed: %s",
		r.n, r.victim, r.killAfter, r.killAt.Round(time.Millisecond), r.down.Round(time.Millisecond), r.summary())
	for _, d := range head10(r.wrongful) {
		t.Errorf("  wrongful delete: %s", d)
	}
	if len(r.lost) > 0 {
		t.Errorf("  lost (%d): %v; unexpected (%d): %v", len(r.lost), head(r.lost), len(r.extra), head(r.extra))
	}
	if len(r.gaps) > 0 {
		t.Errorf("  wanted records seen missing from BIND during the trial (%d): %v", len(r.gaps), head(r.gaps))
	}
	if len(r.untapped) > 0 {
		t.Errorf("  plans applied that the tap never saw, so unchecked (%d): %v", len(r.untapped), head(r.untapped))
	}
}

func head10[T any](s []T) []T { return s[:min(len(s), 10)] }

// chaosTable renders one row per trial and a summary line.
func chaosTable(rows []chaosTrial) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "trial\tvictim\tkilled after\tat\tdown\tdeletes seen\twrongful deletes\trecords lost\tseen missing\tuntapped\tconverged (from restart)\tafter last change\t")
	var wrongful, lost, failed int
	var converge []time.Duration
	for _, r := range rows {
		conv, after := "no", "-"
		if r.converged {
			conv, after = r.converge.Round(10*time.Millisecond).String(), r.afterBurst.Round(10*time.Millisecond).String()
			converge = append(converge, r.converge)
		}
		fmt.Fprintf(w, "%d\t%s\t%d/%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", r.n, r.victim, r.killAfter, r.changes,
			r.killAt.Round(10*time.Millisecond), r.down.Round(10*time.Millisecond), r.deletes,
			len(r.wrongful), len(r.lost), len(r.gaps), len(r.untapped), conv, after)
		wrongful += len(r.wrongful)
		lost += len(r.lost)
		if r.failed() {
			failed++
		}
	}
	w.Flush()
	slices.Sort(converge)
	verdict := "PASS"
	if failed > 0 || len(rows) < *chaosTrials {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "%s: %d/%d trials run, %d failed; %d wrongful deletes, %d records lost", verdict,
		len(rows), *chaosTrials, failed, wrongful, lost)
	if len(converge) > 0 {
		fmt.Fprintf(&b, "; converged from restart in median %s, max %s",
			converge[len(converge)/2].Round(10*time.Millisecond), converge[len(converge)-1].Round(10*time.Millisecond))
	}
	return b.String()
}
