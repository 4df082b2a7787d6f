package systemtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
	"github.com/zonestream/zonestream/testenv/walkthrough"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/testenv/bind"
	corednsenv "github.com/zonestream/zonestream/testenv/coredns"
	"github.com/zonestream/zonestream/testenv/kube"
	"github.com/zonestream/zonestream/testenv/pdns"
)

// dnsServer is a real DNS server a provider drives, as the pipeline tests
// use it: asked by DNS, stopped and started again.
type dnsServer interface {
	Query(name string, qtype uint16) ([]dns.RR, error)
	Halt() error
	Restart(ctx context.Context) error
}

// backend is a provider and its real server, for tests run over each.
type backend struct {
	dnsServer
	// flags is the provider's command line for zone, owned by owner.
	flags func(owner string) []string
	// editA changes the A RRset of name from old to ip behind
	// zonestream's back, as an operator would.
	editA func(name, old, ip string) error
	// plantA adds an A record zonestream does not own.
	plantA func(name, ip string) error
	// untouched, when set, checks in the server's own store that the A
	// record plantA put at name is still there exactly as planted, and
	// nothing else was written at name: what a DNS answer does not show.
	untouched func(name, ip string) error
}

var backends = []struct {
	name  string
	start func(t *testing.T, zone string) backend
}{
	{"rfc2136", func(t *testing.T, zone string) backend {
		s := bind.StartT(t, zone)
		return backend{
			dnsServer: s,
			flags:     func(owner string) []string { return rfc2136Flags(s, zone, owner) },
			editA: func(name, old, ip string) error {
				o, err := dns.NewRR(name + ". 300 IN A " + old)
				if err != nil {
					return err
				}
				n, err := dns.NewRR(name + ". 300 IN A " + ip)
				if err != nil {
					return err
				}
				return s.Update(zone, []dns.RR{n}, []dns.RR{o})
			},
			plantA: func(name, ip string) error { return walkthrough.Plant(s, zone, name+". 300 IN A "+ip) },
		}
	}},
	{"pdns", func(t *testing.T, zone string) backend {
		s := pdns.StartT(t, zone)
		set := func(name, _, ip string) error { return s.Plant(zone, name, "A", 300, ip) }
		return backend{
			dnsServer: s,
			flags:     func(owner string) []string { return pdnsFlags(s, zone, owner) },
			editA:     set,
			plantA:    func(name, ip string) error { return set(name, "", ip) },
		}
	}},
	{"coredns", func(t *testing.T, zone string) backend {
		s := corednsenv.StartT(t, zone)
		entry := func(ip string) string { return `{"host":"` + ip + `","ttl":300}` }
		return backend{
			dnsServer: s,
			flags:     func(owner string) []string { return corednsFlags(s, zone, owner) },
			// Every etcd entry of name that holds old holds ip now, its
			// other fields (targetstrip, ttl) as they were.
			editA: func(name, old, ip string) error {
				keys, err := s.Keys(s.Key(name, "") + "/")
				if err != nil {
					return err
				}
				n := 0
				for k, v := range keys {
					var e map[string]any
					if err := json.Unmarshal([]byte(v), &e); err != nil || e["host"] != old {
						continue
					}
					e["host"] = ip
					b, err := json.Marshal(e)
					if err != nil {
						return err
					}
					if err := s.Put(k, string(b)); err != nil {
						return err
					}
					n++
				}
				if n == 0 {
					return fmt.Errorf("no etcd entry of %s holds %s: %v", name, old, keys)
				}
				return nil
			},
			plantA: func(name, ip string) error { return s.Put(s.Key(name, ""), entry(ip)) },
			untouched: func(name, ip string) error {
				key := s.Key(name, "")
				v, err := s.Keys(key)
				if err != nil {
					return err
				}
				if len(v) != 1 || v[key] != entry(ip) {
					return fmt.Errorf("etcd entries of %s: %v", name, v)
				}
				return nil
			},
		}
	}},
}

// pdnsFlags is the ExternalDNS command line for a PowerDNS server.
func pdnsFlags(s *pdns.Server, zone, owner string) []string {
	return []string{
		"--provider=pdns", "--pdns-server=" + s.APIURL, "--pdns-api-key=" + s.APIKey,
		"--domain-filter=" + zone, "--txt-owner-id=" + owner, "--policy=sync", "--registry=txt",
	}
}

// corednsFlags is the command line for a CoreDNS served from etcd: the
// ExternalDNS flags, and the etcd endpoint and zone for the applier.
func corednsFlags(s *corednsenv.Server, zone, owner string) []string {
	return []string{
		"--provider=coredns", "--coredns-etcd-urls=" + s.EtcdURL, "--coredns-zone=" + zone,
		"--coredns-prefix=" + s.Path + "/",
		"--domain-filter=" + zone, "--txt-owner-id=" + owner, "--policy=sync", "--registry=txt",
	}
}

// startStages runs the four stages as separate processes on one bus: the
// provider's flags go to the planner and the applier, applierFlags to the
// applier only.
func startStages(t *testing.T, natsURL string, cluster *kube.Cluster, clusterName string, providerFlags []string, applierFlags ...string) *pipeline {
	return startStagesWith(t, natsURL, cluster, clusterName, providerFlags, nil, applierFlags...)
}

// fastLease is the leader election's timing in tests: a stage killed
// (SIGKILL) leaves its lease held, and its restart waits for it to lapse.
var fastLease = []string{"--leader-elect-lease-duration=2s", "--leader-elect-renew-deadline=1500ms", "--leader-elect-retry-period=250ms"}

// defaultLease is the leader election's default timing, for tests that
// come after fastLease: the last occurrence of a flag wins.
var defaultLease = []string{"--leader-elect-lease-duration=15s", "--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=2s"}

// startStagesWith is startStages with extra flags for each stage, by
// stage name: e.g. each stage's own NATS credentials.
func startStagesWith(t *testing.T, natsURL string, cluster *kube.Cluster, clusterName string, providerFlags []string, extra map[string][]string, applierFlags ...string) *pipeline {
	common := append([]string{"--nats-url=" + natsURL, "--metrics-address=127.0.0.1:0"}, fastLease...)
	pick := func(prefixes ...string) []string {
		var out []string
		for _, f := range providerFlags {
			for _, p := range prefixes {
				if strings.HasPrefix(f, p) {
					out = append(out, f)
				}
			}
		}
		return out
	}
	args := map[string][]string{
		// A short heartbeat: a restarted dedup or planner trusts only marks
		// renewed after it started.
		"collector": {"--kubeconfig=" + cluster.Kubeconfig, "--source=service", "--cluster-name=" + clusterName, "--heartbeat-interval=1s"},
		"dedup":     {"--heartbeat-interval=1s"},
		"planner":   pick("--domain-filter", "--txt-owner-id", "--policy", "--registry", "--max-deletes"),
		"applier":   append(pick("--provider", "--rfc2136", "--pdns", "--coredns"), applierFlags...),
	}
	p := &pipeline{}
	for _, def := range cli.Stages() {
		name := def.Name
		if args[name] == nil && extra[name] == nil {
			continue // the portal: only where a test asks for it
		}
		a := append([]string{name}, append(slices.Clone(common), args[name]...)...)
		a = append(a, extra[name]...)
		p.stages = append(p.stages, startProcess(t, name, a...))
	}
	return p
}

// stage returns the process of the stage named.
func (p *pipeline) stage(name string) *process {
	for _, s := range p.stages {
		if s.name == name {
			return s
		}
	}
	panic("no stage " + name)
}

// ready asks a process' /readyz: nil when it answers 200.
func ready(addr string) error {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %s", resp.Status)
	}
	return nil
}

// waitUntil polls cond every 250ms until it holds or limit passes, and
// fails the test with what cond last said.
func waitUntil(t testing.TB, what string, limit time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s: %v", what, limit, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// wrongServices lists the Services from..to whose A record or ownership
// TXT the server does not answer as wanted.
func wrongServices(s dnsServer, zone, owner string, from, to int) []string {
	var wrong []string
	for i := from; i < to; i++ {
		name := fmt.Sprintf("svc-%d.%s", i, zone)
		if got := answersOf(s, name, dns.TypeA); !slices.Equal(got, []string{burstIP(i)}) {
			wrong = append(wrong, fmt.Sprintf("%s A %v", name, got))
			continue
		}
		txt := answersOf(s, "a-"+name, dns.TypeTXT)
		if len(txt) != 1 || !strings.Contains(txt[0], "external-dns/owner="+owner+",") {
			wrong = append(wrong, fmt.Sprintf("a-%s TXT %v", name, txt))
		}
	}
	return wrong
}

// answersOf renders the answer to name/qtype (A, AAAA, TXT); an error is
// an answer of its own, so that it never equals a wanted one.
func answersOf(s dnsServer, name string, qtype uint16) []string {
	out, err := walkthrough.AnswerTexts(s, name, qtype)
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	slices.Sort(out)
	return out
}

// summarize says how many things are wrong, with the first few.
func summarize(wrong []string) string {
	return fmt.Sprintf("%d wrong, e.g. %v", len(wrong), head(wrong))
}
