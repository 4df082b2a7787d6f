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
// changed) and the owners of each name's RRsets (so that an owner keeps its
// record across restarts).
type published struct {
	hashes map[string]string
	owners map[string][]events.RRsetOwner // DNS name -> owners last published
}

func readBack(ctx context.Context, js jetstream.JetStream, log *slog.Logger) (*published, error) {
	p := &published{hashes: map[string]string{}, owners: map[string][]events.RRsetOwner{}}
	var mu sync.Mutex
	done := false
	err := events.ReadLast(ctx, js, events.StreamDesired, []string{events.SubjectDesired + ".>"},
		func(m events.Received) {
			mu.Lock()
			defer mu.Unlock()
			if done {
				return
			}
			p.hashes[m.Subject] = m.Hash()
			if events.IsMarker(m.Subject) {
				return
			}
			var d events.DesiredState
			if err := events.Decode(m, &d); err != nil {
				// Only who owned what is lost: the tie-break decides again.
				log.Warn("undecodable desired state read back; its owners are forgotten", "subject", m.Subject, "err", err)
				return
			}
			p.setOwners(d.DNSName, d.Owners)
		})
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	done = true
	return p, nil
}

func (p *published) setOwners(name string, owners []events.RRsetOwner) {
	if len(owners) == 0 {
		delete(p.owners, name)
		return
	}
	p.owners[name] = owners
}
