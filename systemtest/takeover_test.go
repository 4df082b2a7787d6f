package systemtest

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/zonestream/zonestream/testenv/bind"
	"github.com/zonestream/zonestream/testenv/kube"
)

// aesKey is a 32-byte key given raw, as ExternalDNS accepts it.
const aesKey = "0123456789abcdef0123456789abcdef"

// externalDNSFormat is how an ExternalDNS installation wrote its TXT
// registry, and the flags that tell zonestream so.
type externalDNSFormat struct {
	name  string
	flags []string
	// registry returns the TXT records ExternalDNS wrote for an A record
	// at label, owned by owner: relative name -> content.
	registry func(label, owner string) map[string]string
}

func ownerString(owner, label string) string {
	return "heritage=external-dns,external-dns/owner=" + owner + ",external-dns/resource=service/default/" + label
}

var externalDNSFormats = []externalDNSFormat{
	{"old", nil, func(l, o string) map[string]string { return map[string]string{l: ownerString(o, l)} }},
	{"new", nil, func(l, o string) map[string]string { // 0.12-0.14 wrote both
		return map[string]string{l: ownerString(o, l), "a-" + l: ownerString(o, l)}
	}},
	{"pre", []string{"--txt-prefix=xdns-"}, func(l, o string) map[string]string {
		return map[string]string{"xdns-a-" + l: ownerString(o, l)}
	}},
	{"suf", []string{"--txt-suffix=-xdns"}, func(l, o string) map[string]string {
		return map[string]string{"a-" + l + "-xdns": ownerString(o, l)}
	}},
	{"enc", []string{"--txt-encrypt-enabled", "--txt-encrypt-aes-key=" + aesKey}, func(l, o string) map[string]string {
		return map[string]string{"a-" + l: encryptLikeExternalDNS(ownerString(o, l))}
	}},
}

// encryptLikeExternalDNS is ExternalDNS' TXT encryption, written here from
// its published scheme rather than taken from the planner: gzip at best
// compression, AES-256-GCM with a random 12-byte nonce, base64 of
// nonce||ciphertext.
func encryptLikeExternalDNS(plain string) string {
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	w.Write([]byte(plain))
	w.Close()
	block, _ := aes.NewCipher([]byte(aesKey))
	gcm, _ := cipher.NewGCM(block)
	nonce := make([]byte, gcm.NonceSize())
	if _, err := io.ReadFull(rand.Reader, nonce); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(gcm.Seal(nonce, nonce, z.Bytes(), nil))
}

func decryptLikeExternalDNS(text string) (string, bool) {
	raw, err := base64.StdEncoding.DecodeString(strings.Trim(text, `"`))
	if err != nil || len(raw) < 12 {
		return "", false
	}
	block, _ := aes.NewCipher([]byte(aesKey))
	gcm, _ := cipher.NewGCM(block)
	data, err := gcm.Open(nil, raw[:12], raw[12:], nil)
	if err != nil {
		return "", false
	}
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return string(data), true
	}
	plain, err := io.ReadAll(r)
	return string(plain), err == nil
}

// TestTakeOverExternalDNSZones fills BIND zones the way ExternalDNS leaves
// them for owner "x", in each registry format, and runs zonestream on them
// as x (must change nothing), as another owner (must touch nothing of
// x's), and as another owner adopting x (must take every name over
// without losing a record). A second Service, not yet in DNS, proves each
// run was live: it must be created, in the zone's format.
func TestTakeOverExternalDNSZones(t *testing.T) {
	scenarios := []struct {
		name, owner string
		flags       []string
	}{
		{"same", "x", nil},
		{"other", "y", nil},
		{"adopt", "y", []string{"--txt-adopt-owner=x"}},
	}
	type zoneRun struct {
		zone     string
		format   externalDNSFormat
		scenario int
	}
	var runs []zoneRun
	var zones []string
	for _, f := range externalDNSFormats {
		for i, s := range scenarios {
			z := f.name + "-" + s.name + ".test"
			runs = append(runs, zoneRun{z, f, i})
			zones = append(zones, z)
		}
	}
	cluster := kube.StartT(t)
	ns := bind.StartT(t, zones...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// What ExternalDNS left: web's A record and its registry, per zone, with
	// TTL 0 where no TTL was asked for, as ExternalDNS' rfc2136 writes them.
	for _, r := range runs {
		rrs := []dns.RR{mustRR(t, "web."+r.zone+". 0 IN A 192.0.2.50")}
		for name, txt := range r.format.registry("web", "x") {
			rrs = append(rrs, &dns.TXT{Hdr: dns.RR_Header{Name: name + "." + r.zone + ".", Rrtype: dns.TypeTXT,
				Class: dns.ClassINET, Ttl: 0}, Txt: []string{txt}})
		}
		if err := ns.Update(r.zone, rrs, nil); err != nil {
			t.Fatal(err)
		}
	}
	before := map[string][]string{}
	for _, z := range zones {
		before[z] = zoneContents(t, ns, z)
	}
	hostnames := func(label string) string {
		var hs []string
		for _, z := range zones {
			hs = append(hs, label+"."+z)
		}
		return strings.Join(hs, ",")
	}
	for _, svc := range []struct{ name, ip string }{{"web", "192.0.2.50"}, {"api", "192.0.2.51"}} {
		created, err := cluster.Client.CoreV1().Services("default").Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: svc.name, Namespace: "default", Annotations: map[string]string{
				"external-dns.alpha.kubernetes.io/hostname": hostnames(svc.name)}},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Ports: []corev1.ServicePort{{Port: 80}}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: svc.ip}}
		if _, err := cluster.Client.CoreV1().Services("default").UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	for _, r := range runs {
		s := scenarios[r.scenario]
		args := append([]string{"--kubeconfig=" + cluster.Kubeconfig, "--source=service", "--interval=2s",
			"--nats-listen=127.0.0.1:0", "--data-dir=" + t.TempDir(), "--metrics-address=127.0.0.1:0"},
			rfc2136Flags(ns, r.zone, s.owner)...)
		args = append(append(args, r.format.flags...), s.flags...)
		startProcess(t, "zonestream "+r.zone, args...)
	}

	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := scenarios[r.scenario]
			// Live: api is created, with an ownership record of s.owner.
			var got []string
			deadline := time.Now().Add(90 * time.Second)
			for {
				lines, err := transferZone(ns, r.zone)
				got = readable(lines, r.format.name == "enc")
				if err == nil && slices.Contains(got, "api A 192.0.2.51") && ownsLabel(got, "api", s.owner) &&
					(s.name != "adopt" || ownsLabel(got, "web", s.owner)) {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("%s: zonestream never reached its end state:\n%s", r.zone, strings.Join(got, "\n"))
					return
				}
				time.Sleep(500 * time.Millisecond)
			}
			time.Sleep(3 * time.Second) // and then a resync or two
			lines, err := transferZone(ns, r.zone)
			if err != nil {
				t.Errorf("%s: %v", r.zone, err)
				return
			}
			got = readable(lines, r.format.name == "enc")
			was := readable(before[r.zone], r.format.name == "enc")
			var webNow, webBefore []string
			for _, l := range got {
				if !strings.Contains(l, "api") {
					webNow = append(webNow, l)
				}
			}
			for _, l := range was {
				webBefore = append(webBefore, l)
			}
			switch s.name {
			case "same", "other":
				// Nothing of what ExternalDNS left is changed, to the byte,
				// its TTL 0 included (zonestream writes 300 only where it
				// creates a record no one asked a TTL for).
				if !slices.Equal(webNow, webBefore) {
					t.Errorf("%s (%s): records x owned changed:\nnow\n%s\nbefore\n%s", r.zone, s.name,
						strings.Join(webNow, "\n"), strings.Join(webBefore, "\n"))
				}
				if rrs, err := ns.Query("web."+r.zone, dns.TypeA); err != nil || len(rrs) != 1 || rrs[0].Header().Ttl != 0 {
					t.Errorf("%s (%s): web's A is %v (%v), want it left at TTL 0", r.zone, s.name, rrs, err)
				}
			case "adopt":
				if !slices.Contains(got, "web A 192.0.2.50") {
					t.Errorf("%s: adopting lost web's A record:\n%s", r.zone, strings.Join(got, "\n"))
				}
				for _, l := range got {
					if strings.Contains(l, "owner=x") {
						t.Errorf("%s: x still owns something after adoption: %s", r.zone, l)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// readable decrypts registry records of an encrypted zone, so that
// contents can be compared and read.
func readable(lines []string, encrypted bool) []string {
	if !encrypted {
		return lines
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if name, data, ok := strings.Cut(l, " TXT "); ok {
			if plain, ok := decryptLikeExternalDNS(data); ok {
				l = name + " TXT " + plain
			}
		}
		out = append(out, l)
	}
	return sorted(out)
}

// ownsLabel reports whether some TXT in the zone says owner owns label.
func ownsLabel(lines []string, label, owner string) bool {
	for _, l := range lines {
		if strings.Contains(l, " TXT ") && strings.Contains(l, "external-dns/owner="+owner+",") &&
			strings.HasSuffix(l, "/"+label) {
			return true
		}
	}
	return false
}

func mustRR(t *testing.T, s string) dns.RR {
	rr, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return rr
}
