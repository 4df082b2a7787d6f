package externaldns

import (
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/external-dns/endpoint"
	"sigs.k8s.io/external-dns/plan"

	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
)

// TXT targets are the one thing ExternalDNS' endpoints and zonestream's
// hold differently. ExternalDNS' registry hands its providers TXT targets
// in presentation form, quoted ("heritage=external-dns,..."), and
// providers list them back either so (Route53, Cloudflare) or as bare
// character-strings (rfc2136); a zonestream TXT target is the raw value.
// txtTargets converts both ways, and remembers each listed TXT RRset's
// targets as the provider wrote them, so that an update or delete names
// them exactly as listed (Route53 deletes only an exact match) — except
// where the provider reads targets as zone-file text (zoneText: rfc2136),
// which reads a bare listed value with a blank in it as several
// character-strings, so it goes back quoted.
type txtTargets struct {
	zoneText bool
	mu       sync.Mutex
	listed   map[string][]string
}

// zoneTextProviders are the ExternalDNS providers that parse targets as
// zone-file text.
var zoneTextProviders = []string{"rfc2136"}

func txtKey(ep *endpoint.Endpoint) string {
	return strings.Join(append([]string{ep.DNSName, ep.SetIdentifier}, ep.Targets...), "\x00")
}

// fromProvider turns a provider's listing into zonestream's TXT values.
func (t *txtTargets) fromProvider(eps []*endpoint.Endpoint) []*endpoint.Endpoint {
	listed := map[string][]string{}
	for _, ep := range eps {
		if ep == nil || ep.RecordType != endpoint.RecordTypeTXT {
			continue
		}
		orig := ep.Targets
		raw := make(endpoint.Targets, len(orig))
		for i, v := range orig {
			raw[i] = rawTXT(v)
		}
		ep.Targets = raw
		listed[txtKey(ep)] = orig
	}
	t.mu.Lock()
	t.listed = listed
	t.mu.Unlock()
	return eps
}

// toProvider turns a batch's TXT values into ExternalDNS' form: new ones
// quoted, as ExternalDNS' registry writes them; old ones as listed.
func (t *txtTargets) toProvider(ch *plan.Changes) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, eps := range [][]*endpoint.Endpoint{ch.UpdateOld, ch.Delete} {
		for _, ep := range eps {
			if ep.RecordType != endpoint.RecordTypeTXT {
				continue
			}
			if orig, ok := t.listed[txtKey(ep)]; ok {
				ep.Targets = t.asListed(orig)
			} else {
				quoteAll(ep)
			}
		}
	}
	for _, eps := range [][]*endpoint.Endpoint{ch.Create, ch.UpdateNew} {
		for _, ep := range eps {
			if ep.RecordType == endpoint.RecordTypeTXT {
				quoteAll(ep)
			}
		}
	}
}

func (t *txtTargets) asListed(orig []string) endpoint.Targets {
	out := slices.Clone(orig)
	for i, v := range out {
		if t.zoneText && !strings.HasPrefix(v, `"`) {
			out[i] = `"` + v + `"` // already escaped, as listed
		}
	}
	return out
}

func quoteAll(ep *endpoint.Endpoint) {
	q := make(endpoint.Targets, len(ep.Targets))
	for i, v := range ep.Targets {
		q[i] = pdns.QuoteTXT(v)
	}
	ep.Targets = q
}

// rawTXT reads one listed TXT target: quoted character-strings
// (concatenated), or one bare, escaped character-string.
func rawTXT(v string) string {
	if strings.HasPrefix(v, `"`) {
		return pdns.ParseTXT(v)
	}
	return provider.UnescapeTXT(v)
}
