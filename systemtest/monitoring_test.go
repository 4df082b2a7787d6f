package systemtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	"sigs.k8s.io/yaml"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// rulesFile is the alert rules zonestream ships (deploy/monitoring).
const rulesFile = "../deploy/monitoring/zonestream-rules.yaml"

// TestMonitoringRulesFireOnARealOutage runs the all-in-one binary against
// a real kube-apiserver and BIND, then stops BIND (a plan for a new record
// fails) and the kube-apiserver, scraping /metrics every 2 s. The metrics
// must say so as ExternalDNS' do (the last sync stops, registry errors
// grow) and beyond (the collector's watches broken, source errors grow,
// /readyz not ready for the Kubernetes API), and the shipped alert rules,
// evaluated by promtool over those very scrapes, must fire: none while
// healthy, the provider, watch and last-sync alerts at the end.
// Scrapes are 2 s apart and read as a minute apart (time stretched 30
// times, timestamps too), so that 5-minute "for"s pass in seconds.
func TestMonitoringRulesFireOnARealOutage(t *testing.T) {
	promtool := goTool(t, "ZS_PROMTOOL", "promtool")
	if out, err := exec.Command(promtool, "check", "rules", rulesFile).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	const zone, owner = "monitoring.test", "monitoring"
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zone)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	services := cluster.Client.CoreV1().Services("default")
	if err := setLoadBalancer(ctx, services, "web",
		map[string]string{"external-dns.alpha.kubernetes.io/hostname": "web." + zone}, "192.0.2.10"); err != nil {
		t.Fatal(err)
	}
	ops := "127.0.0.1:" + freePort(t)
	startProcess(t, "zonestream", append([]string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service",
		"--data-dir=" + t.TempDir(), "--metrics-address=" + ops, "--interval=2s",
		"--nats-listen=127.0.0.1:" + freePort(t)}, rfc2136Flags(ns, zone, owner)...)...)
	waitUntil(t, "web served", time.Minute, func() error {
		if got := answersOf(ns, "web."+zone, dns.TypeA); !slices.Equal(got, []string{"192.0.2.10"}) {
			return fmt.Errorf("BIND answers %v", got)
		}
		return nil
	})
	waitUntil(t, "ready", time.Minute, func() error { return ready(ops) })

	sc := startScraper(t, ops, 2*time.Second)
	time.Sleep(12 * time.Second)
	healthy := sc.len() - 1

	// The provider down; a new Service's plan cannot be applied.
	if err := ns.Halt(); err != nil {
		t.Fatal(err)
	}
	halted := time.Now()
	if err := setLoadBalancer(ctx, services, "api",
		map[string]string{"external-dns.alpha.kubernetes.io/hostname": "api." + zone}, "192.0.2.11"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(8 * time.Second)
	// The Kubernetes API down.
	if err := cluster.Stop(); err != nil {
		t.Logf("stop kube-apiserver: %v", err)
	}
	waitUntil(t, "/readyz not ready for the Kubernetes API", time.Minute, func() error {
		body, err := readyz(ops)
		if err == nil && !strings.Contains(body, "Kubernetes API") {
			err = errors.New("/readyz: " + body)
		}
		return err
	})
	// The last sync older than 15 (stretched) minutes: 30 s and a margin.
	time.Sleep(time.Until(halted.Add(40 * time.Second)))
	scrapes := sc.stop()
	last := scrapes[len(scrapes)-1]
	t.Logf("%d scrapes, %d healthy; the provider down for %s", len(scrapes), healthy+1, time.Since(halted).Round(time.Second))

	first := scrapes[healthy]
	for _, c := range []struct {
		series string
		ok     func(before, after float64) bool
		want   string
	}{
		{"zonestream_collector_watches_healthy", func(b, a float64) bool { return b == 1 && a == 0 }, "from 1 to 0"},
		{"zonestream_collector_watch_errors_total", func(b, a float64) bool { return a > b }, "to grow"},
		{"external_dns_source_errors_total", func(b, a float64) bool { return a > b }, "to grow"},
		{"external_dns_registry_errors_total", func(b, a float64) bool { return a > b }, "to grow"},
		{"external_dns_controller_consecutive_soft_errors", func(b, a float64) bool { return b == 0 && a > 0 }, "from 0 to more"},
		{"external_dns_controller_last_reconcile_timestamp_seconds", func(b, a float64) bool { return a > b }, "to advance"},
		{"external_dns_controller_last_sync_timestamp_seconds", func(_, a float64) bool { return a < float64(halted.Unix()+1) }, "to stop when the provider went down"},
		{"external_dns_build_info", func(b, a float64) bool { return b == 1 && a == 1 }, "1"},
	} {
		b, a := first.value(c.series), last.value(c.series)
		if !c.ok(b, a) {
			t.Errorf("%s: %v then %v, want %s", c.series, b, a, c.want)
		}
	}

	// The rules over the scrapes: nothing fires while healthy; then the
	// provider, the watches and the last sync do. (A plan failed too, but
	// ZonestreamPlansFailing wants failures repeated over minutes of real
	// time: the planner re-plans within a minute, which stretched time
	// does not shorten.)
	want := map[string]bool{"ZonestreamDNSProviderFailing": true, "ZonestreamCollectorWatchesBroken": true,
		"ZonestreamLastSyncTooOld": true}
	rules := readRules(t, rulesFile)
	test := promtoolTest(t, rules, scrapes, healthy, want)
	dir := t.TempDir()
	abs, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	test = strings.Replace(test, "RULES", abs, 1)
	testFile := filepath.Join(dir, "test.yaml")
	if err := os.WriteFile(testFile, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "test", "rules", testFile).CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s\ntest file:\n%s", err, out, lastBytes([]byte(test), 4096))
	}
}

// readyz returns /readyz's body; an error but for a 503.
func readyz(addr string) (string, error) {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		return "", errors.New("/readyz: ready")
	}
	return string(body), nil
}

// scrape is one /metrics: its series (name and labels as written) and
// values, and when it was taken.
type scrape struct {
	at     time.Time
	series map[string]float64
}

// value is the value of series; a name alone stands for its one series
// (external_dns_build_info's labels are the build's).
func (s scrape) value(series string) float64 {
	if v, ok := s.series[series]; ok {
		return v
	}
	for k, v := range s.series {
		if strings.HasPrefix(k, series+"{") {
			return v
		}
	}
	return 0
}

type scraper struct {
	mu      sync.Mutex
	scrapes []scrape
	stopped chan struct{}
	done    chan struct{}
}

// startScraper scrapes addr's /metrics every interval until stop.
func startScraper(t *testing.T, addr string, interval time.Duration) *scraper {
	s := &scraper{stopped: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if sc, err := scrapeOnce(addr); err != nil {
				t.Logf("scrape: %v", err)
			} else {
				s.mu.Lock()
				s.scrapes = append(s.scrapes, sc)
				s.mu.Unlock()
			}
			select {
			case <-s.stopped:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

func (s *scraper) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.scrapes)
}

func (s *scraper) stop() []scrape {
	select {
	case <-s.stopped:
	default:
		close(s.stopped)
	}
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scrapes
}

func scrapeOnce(addr string) (scrape, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return scrape{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return scrape{}, err
	}
	sc := scrape{at: time.Now(), series: map[string]float64{}}
	lines := bufio.NewScanner(bytes.NewReader(body))
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		line := lines.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			return scrape{}, fmt.Errorf("bad line %q", line)
		}
		sc.series[line[:i]] = v
	}
	return sc, lines.Err()
}

type ruleFile struct {
	Groups []struct {
		Rules []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

func readRules(t *testing.T, path string) ruleFile {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.Unmarshal(data, &rf); err != nil {
		t.Fatal(err)
	}
	return rf
}

var metricName = regexp.MustCompile(`\b(external_dns|zonestream)_[a-z0-9_]+`)

// stretch is how much longer promtool's time runs than the test's: a
// scrape every 2 s is one a minute.
const stretch = 30

// promtoolTest writes a promtool unit test: the series the rules read,
// from the scrapes (one a minute, with the installation's labels), and
// the alerts expected at the last healthy scrape (none) and at the last
// one (want, each with its labels and annotations).
func promtoolTest(t *testing.T, rules ruleFile, scrapes []scrape, healthy int, want map[string]bool) string {
	names := map[string]bool{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			for _, n := range metricName.FindAllString(r.Expr, -1) {
				names[n] = true
			}
		}
	}
	var series []string
	seen := map[string]bool{}
	for _, sc := range scrapes {
		for s := range sc.series {
			name, _, _ := strings.Cut(s, "{")
			if names[name] && !seen[s] {
				seen[s] = true
				series = append(series, s)
			}
		}
	}
	slices.Sort(series)
	var b strings.Builder
	fmt.Fprintf(&b, "rule_files: [%q]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n", "RULES")
	for _, s := range series {
		name, labels, _ := strings.Cut(s, "{")
		labels = strings.TrimSuffix(labels, "}")
		sel := name + `{namespace="zonestream",job="zonestream"`
		if labels != "" {
			sel += "," + labels
		}
		sel += "}"
		var values []string
		for k, sc := range scrapes {
			v, ok := sc.series[s]
			switch {
			case !ok:
				values = append(values, "_")
			case strings.HasSuffix(name, "_timestamp_seconds") && v > 0:
				// Its age at the scrape, stretched, at the scrape's minute.
				age := sc.at.Sub(time.Unix(0, int64(v*1e9))).Seconds()
				values = append(values, strconv.FormatFloat(float64(k*60)-age*stretch, 'f', 3, 64))
			default:
				values = append(values, strconv.FormatFloat(v, 'g', -1, 64))
			}
		}
		fmt.Fprintf(&b, "      - series: %q\n        values: %q\n", sel, strings.Join(values, " "))
	}
	b.WriteString("    alert_rule_test:\n")
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			fmt.Fprintf(&b, "      - eval_time: %dm\n        alertname: %s\n        exp_alerts: []\n", healthy, r.Alert)
			if !want[r.Alert] {
				continue
			}
			fmt.Fprintf(&b, "      - eval_time: %dm\n        alertname: %s\n        exp_alerts:\n          - exp_labels:\n", len(scrapes)-1, r.Alert)
			fmt.Fprintf(&b, "              namespace: zonestream\n              job: zonestream\n")
			for k, v := range r.Labels {
				fmt.Fprintf(&b, "              %s: %q\n", k, v)
			}
			b.WriteString("            exp_annotations:\n")
			for k, v := range r.Annotations {
				fmt.Fprintf(&b, "              %s: %q\n", k, v)
			}
		}
	}
	for a := range want {
		if !strings.Contains(b.String(), "alertname: "+a+"\n") {
			t.Fatalf("no rule %s in %s", a, rulesFile)
		}
	}
	return b.String()
}
