package dedup

import (
	"context"
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// published is what dedup published before, read back from the desired
// stream at start: the content hash per subject (to stay quiet when nothing
// changed) and the holders of each name's RRsets (so that a holder keeps its
// record across restarts).
type published struct {
	hashes  map[string]string
	holders map[string][]events.RRsetHolder // DNS name -> holders last published
}

func readBack(ctx context.Context, js jetstream.JetStream, log *slog.Logger) (*published, error) {
	p := &published{hashes: map[string]string{}, holders: map[string][]events.RRsetHolder{}}
	var mu sync.Mutex
	done := false
	err := events.ReadLast(ctx, js, events.StreamDesired, []string{events.SubjectDesired + ".>"},
		func(m events.Received) {
			mu.Lock()
			defer mu.Unlock()
			// A tombstone is read back as nothing: dedup publishes no
			// tombstone where nothing is known, so the name needs no work.
			if done || m.IsTombstone() {
				return
			}
			p.hashes[m.Subject] = m.Hash()
			if events.IsMarker(m.Subject) {
				return
			}
			var d events.DesiredState
			if err := events.Decode(m, &d); err != nil {
				// Only who owned what is lost: the tie-break decides again.
				log.Warn("undecodable desired state read back; its holders are forgotten", "subject", m.Subject, "err", err)
				return
			}
			p.setHolders(d.DNSName, d.Holders)
		})
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	done = true
	return p, nil
}

func (p *published) setHolders(name string, holders []events.RRsetHolder) {
	if len(holders) == 0 {
		delete(p.holders, name)
		return
	}
	p.holders[name] = holders
}
