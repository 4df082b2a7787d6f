package systemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/loopback"
	"github.com/zonestream/zonestream/testenv/walkthrough"
)

var (
	jscChanges  = flag.Int("jsc.changes", 2000, "JetStream cluster test: Services created in the burst (10000 for the full run)")
	jscDown     = flag.Duration("jsc.down", 5*time.Second, "JetStream cluster test: how long the killed node stays down")
	jscConverge = flag.Duration("jsc.converge", 2*time.Minute, "JetStream cluster test: bound on convergence after the burst")
)

// natsCluster is three nats-server processes on loopback forming one
// JetStream cluster, each killable and restartable on its own address,
// cluster port and store.
type natsCluster struct {
	nodes    []*natsProcess
	names    []string // server_name of each node: n1, n2, n3
	monitors []string // each node's monitoring address
}

func startNATSCluster(t *testing.T, bin string, size int) *natsCluster {
	t.Helper()
	c := &natsCluster{}
	clients, routes := make([]string, size), make([]string, size)
	for i := range size {
		clients[i], routes[i] = loopback.Addr(t), loopback.Addr(t)
		c.monitors = append(c.monitors, loopback.Addr(t))
	}
	var routeURLs []string
	for _, r := range routes {
		routeURLs = append(routeURLs, strconv.Quote("nats-route://"+r))
	}
	for i := range size {
		name := "n" + strconv.Itoa(i+1)
		dir := t.TempDir()
		conf := filepath.Join(dir, "nats.conf")
		text := fmt.Sprintf(`server_name: %s
listen: %q
http: %q
jetstream { store_dir: %q }
cluster {
  name: zonestream
  listen: %q
  routes: [%s]
}
`, name, clients[i], c.monitors[i], filepath.Join(dir, "store"), routes[i], strings.Join(routeURLs, ", "))
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		n := &natsProcess{t: t, bin: bin, addr: clients[i], dir: dir, conf: conf, log: &bytes.Buffer{}}
		t.Cleanup(func() {
			n.kill()
			if t.Failed() {
				t.Logf("--- log of nats-server %s (last 4 KiB) ---\n%s", name, lastBytes(n.log.Bytes(), 4096))
			}
		})
		c.nodes, c.names = append(c.nodes, n), append(c.names, name)
	}
	// No node answers JetStream requests before a quorum runs.
	for _, n := range c.nodes {
		n.launch()
	}
	for _, n := range c.nodes {
		n.waitReady()
	}
	return c
}

// urls is the comma-separated client URLs of every node, as a stage's
// --nats-url takes them.
func (c *natsCluster) urls() string {
	var u []string
	for _, n := range c.nodes {
		u = append(u, n.url())
	}
	return strings.Join(u, ",")
}

func (c *natsCluster) node(name string) *natsProcess {
	return c.nodes[slices.Index(c.names, name)]
}

// stagesOn returns the zonestream stages connected to each node, as its
// /connz says.
func (c *natsCluster) stagesOn() (map[string][]string, error) {
	on := map[string][]string{}
	hc := http.Client{Timeout: 2 * time.Second}
	for i, addr := range c.monitors {
		resp, err := hc.Get("http://" + addr + "/connz")
		if err != nil {
			return nil, err
		}
		var connz struct {
			Connections []struct {
				Name string `json:"name"`
			} `json:"connections"`
		}
		err = json.NewDecoder(resp.Body).Decode(&connz)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		for _, conn := range connz.Connections {
			if stage, ok := strings.CutPrefix(conn.Name, "zonestream-"); ok {
				on[c.names[i]] = append(on[c.names[i]], stage)
			}
		}
	}
	return on, nil
}

// leaders returns the leader (server name) of each zonestream stream, as
// the stream info asked of the cluster says.
func streamLeaders(ctx context.Context, js jetstream.JetStream) (map[string]string, error) {
	leaders := map[string]string{}
	for _, sc := range events.Streams() {
		info, err := streamInfo(ctx, js, sc.Name)
		if err != nil {
			return nil, err
		}
		if info.Cluster == nil || info.Cluster.Leader == "" {
			return nil, fmt.Errorf("stream %s has no leader", sc.Name)
		}
		leaders[sc.Name] = info.Cluster.Leader
	}
	return leaders, nil
}

func streamInfo(ctx context.Context, js jetstream.JetStream, name string) (*jetstream.StreamInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", name, err)
	}
	return st.Info(ctx)
}

// stillRuns says whether the stage's process has not exited (a stage
// that gave up on the node loss would have; nothing restarts it here).
func stillRuns(p *process) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return fmt.Errorf("%s is not running", p.name)
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	// pid (comm) state ...: a zombie has exited and waits to be reaped.
	if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && f[0] == "Z" {
		return fmt.Errorf("%s exited", p.name)
	}
	return nil
}

// TestJetStreamClusterNodeLoss runs the four stages against a 3-node
// JetStream cluster with every stream at R3, and kills (SIGKILL) the node
// that leads the most streams and serves the most stages in the middle of a burst of Services,
// restarting it after a pause. Nothing may be lost: BIND ends exactly as
// the Services ask, no plan deletes anything, every stage still runs.
func TestJetStreamClusterNodeLoss(t *testing.T) {
	const zone, owner, batches = "jsc.test", "jsc", 10
	n := *jscChanges
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	if err := walkthrough.Plant(ns, zone, "legacy."+zone+". 300 IN A 192.0.2.99"); err != nil {
		t.Fatal(err)
	}
	nats3 := startNATSCluster(t, buildNATSServer(t), 3)

	// One tap per node: a plain subscription on any node sees what is
	// published on every node, so each survivor's tap sees every plan,
	// while the killed node's tap misses those of its downtime. Only the
	// survivors' taps are read.
	taps := map[string]*planTap{}
	for i, node := range nats3.nodes {
		taps[nats3.names[i]] = tapPlans(t, node.url())
	}
	// The test's own view of the cluster, through any node.
	nc, err := nats.Connect(nats3.urls(), nats.Name(t.Name()), nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}

	r3 := []string{"--nats-stream-replicas=3"}
	p := startStagesWith(t, nats3.urls(), cluster, owner, rfc2136Flags(ns, zone, owner),
		map[string][]string{"collector": r3, "dedup": r3, "planner": r3, "applier": r3}, "--interval=5s")

	// The stages made the streams, each at R3 with two current followers.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	waitUntil(t, "streams at R3", time.Minute, func() error {
		for _, sc := range events.Streams() {
			info, err := streamInfo(ctx, js, sc.Name)
			if err != nil {
				return err
			}
			if info.Config.Replicas != 3 || info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
				return fmt.Errorf("stream %s: replicas %d, cluster %+v", sc.Name, info.Config.Replicas, info.Cluster)
			}
		}
		return nil
	})
	leaders, err := streamLeaders(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d streams at R3 (config.replicas=3, 1 leader + 2 followers); leaders %v", len(leaders), leaders)

	// The burst, in batches; the node is killed after the third batch
	// and restarted after a pause while the burst goes on.
	type lossReport struct {
		victim                 string
		leads                  int
		stages                 []string
		failover, down, caught time.Duration
		err                    error
	}
	killAt := make(chan struct{})
	lost := make(chan lossReport, 1)
	finished := make(chan struct{})
	// A test that fails midway waits for the node to be handled, so that
	// no server is started after the cleanup has stopped them all.
	defer func() { cancel(); <-finished }()
	go func() {
		defer close(finished)
		var r lossReport
		defer func() { lost <- r }()
		select {
		case <-killAt:
		case <-ctx.Done():
			r.err = ctx.Err()
			return
		}
		leaders, err := streamLeaders(ctx, js)
		if err != nil {
			r.err = err
			return
		}
		on, err := nats3.stagesOn()
		if err != nil {
			r.err = err
			return
		}
		r.victim = victimOf(leaders, on, nats3.names)
		r.leads, r.stages = nStreamsLed(leaders, r.victim), on[r.victim]
		victim := nats3.node(r.victim)
		killed := time.Now()
		victim.kill()
		// Failover: every stream has a leader again, none of them the
		// killed node (30s at most).
		for {
			l, err := streamLeaders(ctx, js)
			if err == nil && !slices.Contains(mapValues(l), r.victim) {
				r.failover = time.Since(killed)
				break
			}
			if time.Since(killed) > 30*time.Second || ctx.Err() != nil {
				r.err = fmt.Errorf("no failover 30s after %s was killed: %v %v", r.victim, l, err)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		select {
		case <-time.After(*jscDown - min(*jscDown, time.Since(killed))):
		case <-ctx.Done():
			r.err = ctx.Err()
			return
		}
		restarted := time.Now()
		r.down = restarted.Sub(killed)
		victim.launch()
		// Caught up: the restarted node is a current follower of every
		// stream again (60s at most).
		for {
			err := allCurrent(ctx, js, r.victim)
			if err == nil {
				r.caught = time.Since(restarted)
				return
			}
			if time.Since(restarted) > time.Minute || ctx.Err() != nil {
				r.err = fmt.Errorf("%s not caught up a minute after its restart: %v", r.victim, err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()

	start := time.Now()
	for b := range batches {
		if err := createServices(ctx, cluster.Client, zone, b*n/batches, (b+1)*n/batches); err != nil {
			t.Fatal(err)
		}
		if b == 2 {
			close(killAt)
		}
	}
	created := time.Since(start)
	r := <-lost
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Logf("%d Services created in %s; node %s (leader of %d streams, serving stages %v) killed after %d, restarted %s later",
		n, created.Round(time.Millisecond), r.victim, r.leads, r.stages, 3*n/batches, r.down.Round(time.Millisecond))
	t.Logf("failover (every stream led by a survivor) %s; restarted node current on every stream %s after its start",
		r.failover.Round(time.Millisecond), r.caught.Round(time.Millisecond))

	took := waitZone(t, ns, zone, burstZone(zone, owner, n), *jscConverge)
	t.Logf("converged %s after the last Service was created (%s from the first)",
		took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))

	for _, s := range p.stages {
		if err := stillRuns(s); err != nil {
			t.Errorf("a stage did not survive the node loss: %v", err)
		}
	}
	// What the stages went through: ended here so that their logs are
	// complete.
	for _, s := range p.stages {
		s.kill()
		log := s.log.String()
		t.Logf("%s: %d disconnects, %d reconnects, %d resyncs with the streams after one", s.name,
			strings.Count(log, `msg="disconnected from NATS"`), strings.Count(log, `msg="reconnected to NATS"`),
			strings.Count(log, `msg="reconnected to NATS: `))
	}
	for name, tap := range taps {
		if name == r.victim {
			continue
		}
		tap.mu.Lock()
		deletes, plans := slices.Clone(tap.deletes), tap.plans
		tap.mu.Unlock()
		if len(deletes) > 0 {
			t.Errorf("plans seen on %s deleted %d wanted records, e.g. %v", name, len(deletes), head(deletes))
		}
		t.Logf("%d plans seen on %s, no delete", plans, name)
	}
	for _, sc := range events.Streams() {
		info, err := streamInfo(ctx, js, sc.Name)
		if err != nil {
			t.Fatal(err)
		}
		if info.Config.Replicas != 3 {
			t.Errorf("stream %s at R%d after the node loss", sc.Name, info.Config.Replicas)
		}
	}
}

// victimOf is the node whose loss hurts most: the most streams led and
// stages connected; on a tie, the one leading the plans.
func victimOf(leaders map[string]string, stagesOn map[string][]string, names []string) string {
	weight := func(n string) int { return nStreamsLed(leaders, n) + len(stagesOn[n]) }
	best := leaders[events.StreamPlans]
	for _, n := range names {
		if weight(n) > weight(best) {
			best = n
		}
	}
	return best
}

func nStreamsLed(leaders map[string]string, node string) int {
	n := 0
	for _, l := range leaders {
		if l == node {
			n++
		}
	}
	return n
}

func mapValues(m map[string]string) []string {
	var v []string
	for _, x := range m {
		v = append(v, x)
	}
	return v
}

// allCurrent says whether node is the leader or a current follower of
// every zonestream stream.
func allCurrent(ctx context.Context, js jetstream.JetStream, node string) error {
	for _, sc := range events.Streams() {
		info, err := streamInfo(ctx, js, sc.Name)
		if err != nil {
			return err
		}
		if info.Cluster == nil {
			return fmt.Errorf("stream %s: no cluster info", sc.Name)
		}
		if info.Cluster.Leader == node {
			continue
		}
		i := slices.IndexFunc(info.Cluster.Replicas, func(p *jetstream.PeerInfo) bool { return p.Name == node })
		if i < 0 || !info.Cluster.Replicas[i].Current || info.Cluster.Replicas[i].Offline {
			return fmt.Errorf("stream %s: %s not a current follower", sc.Name, node)
		}
	}
	return nil
}
