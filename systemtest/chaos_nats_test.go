package systemtest

import (
	"bytes"
	"context"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/testenv/loopback"
)

// The chaos test kills the NATS server too, so it runs nats-server as a
// process of its own (the embedded one of natsenv dies with the test).

// buildNATSServer builds nats-server at the version the workspace requires
// (the events module depends on it), from the module and build caches.
func buildNATSServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "nats-server")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2").CombinedOutput()
	if err != nil {
		t.Fatalf("building nats-server: %v\n%s", err, out)
	}
	return bin
}

// natsProcess is a JetStream server that can be killed with SIGKILL and
// started again on the same loopback address and store directory, as an
// operator's restarted server would be.
type natsProcess struct {
	t    *testing.T
	bin  string
	addr string // 127.0.0.1:port, kept across restarts
	dir  string // JetStream store, kept across restarts
	conf string // a configuration file, if any: then it gives the address and store
	cmd  *exec.Cmd
	log  *bytes.Buffer
}

func startNATSProcess(t *testing.T, bin string) *natsProcess {
	t.Helper()
	n := &natsProcess{t: t, bin: bin, addr: loopback.Addr(t), dir: t.TempDir(), log: &bytes.Buffer{}}
	n.start()
	t.Cleanup(func() {
		n.kill()
		if t.Failed() {
			t.Logf("--- log of nats-server (last 4 KiB) ---\n%s", lastBytes(n.log.Bytes(), 4096))
		}
	})
	return n
}

// start runs the server and returns once JetStream answers (30s at most).
func (n *natsProcess) start() {
	n.t.Helper()
	n.launch()
	n.waitReady()
}

// launch starts the server process without waiting for it: the nodes of
// a cluster answer JetStream requests only once a quorum of them runs.
func (n *natsProcess) launch() {
	n.t.Helper()
	if n.conf != "" {
		n.cmd = exec.Command(n.bin, "-c", n.conf)
	} else {
		host, port, _ := net.SplitHostPort(n.addr)
		n.cmd = exec.Command(n.bin, "-n", "zonestream-chaos", "-a", host, "-p", port, "-js", "-sd", n.dir)
	}
	n.cmd.Stdout, n.cmd.Stderr = n.log, n.log
	if err := n.cmd.Start(); err != nil {
		n.t.Fatalf("start nats-server: %v", err)
	}
}

// waitReady returns once JetStream answers on the server (30s at most).
func (n *natsProcess) waitReady() {
	n.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := jetStreamAnswers(n.url())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("nats-server on %s not ready after 30s: %v\n%s", n.addr, err, lastBytes(n.log.Bytes(), 2048))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func jetStreamAnswers(url string) error {
	nc, err := nats.Connect(url, nats.Timeout(time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = js.AccountInfo(ctx)
	return err
}

// kill ends the server the hard way: nothing is flushed or closed.
func (n *natsProcess) kill() {
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	_ = n.cmd.Wait()
	n.cmd = nil
}

func (n *natsProcess) url() string { return "nats://" + n.addr }

// natsGate is a loopback TCP relay between the stages and the NATS server.
// While closed it turns new connections away (existing ones carry on).
// It exists for one reason: after the server restarts, the plan tap must
// be subscribed again before any stage can publish, or a plan published
// in between would escape the count of wrongful deletes. The tap connects
// to the server directly; the gate opens once the tap is back.
type natsGate struct {
	ln       net.Listener
	upstream string
	open     atomic.Bool

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func startNATSGate(t *testing.T, upstream string) *natsGate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &natsGate{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}}
	g.open.Store(true)
	g.wg.Add(1)
	go g.accept()
	t.Cleanup(g.close)
	return g
}

func (g *natsGate) url() string { return "nats://" + g.ln.Addr().String() }

func (g *natsGate) setOpen(open bool) { g.open.Store(open) }

func (g *natsGate) accept() {
	defer g.wg.Done()
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return // closed
		}
		if !g.open.Load() {
			c.Close()
			continue
		}
		g.wg.Add(1)
		go g.relay(c)
	}
}

// relay copies both ways until either side closes, then closes both: a
// killed server reads to a stage as a dropped connection, as it would
// without the gate.
func (g *natsGate) relay(c net.Conn) {
	defer g.wg.Done()
	u, err := net.DialTimeout("tcp", g.upstream, 2*time.Second)
	if err != nil {
		c.Close()
		return
	}
	if !g.track(c, u) {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(u, c)
	go pipe(c, u)
	<-done
	c.Close()
	u.Close()
	<-done
	g.untrack(c, u)
}

func (g *natsGate) track(conns ...net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conns == nil { // closing
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		g.conns[c] = struct{}{}
	}
	return true
}

func (g *natsGate) untrack(conns ...net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range conns {
		delete(g.conns, c)
	}
}

func (g *natsGate) close() {
	g.ln.Close()
	g.mu.Lock()
	for c := range g.conns {
		c.Close()
	}
	g.conns = nil
	g.mu.Unlock()
	g.wg.Wait()
}
