package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/zonestream/zonestream/services/portal/projection"
)

// Update is one server-sent "names" event: the names that changed, those
// that are gone, and the counts per status after the change.
type Update struct {
	Names   []projection.Summary      `json:"names"`
	Removed []string                  `json:"removed,omitempty"`
	Counts  map[projection.Status]int `json:"counts"`
}

// coalesce is how long the broker gathers changes into one update.
const coalesce = 250 * time.Millisecond

// broker sends every client the updates of the projection.
type broker struct {
	proj    *projection.Projection
	mu      sync.Mutex
	clients map[chan []byte]struct{}
}

func newBroker(proj *projection.Projection) *broker {
	return &broker{proj: proj, clients: map[chan []byte]struct{}{}}
}

func (b *broker) run(ctx context.Context) {
	sub := b.proj.Subscribe()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.C:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(coalesce):
		}
		names := sub.Drain()
		if !b.watched() {
			continue // nobody to tell: a page that opens later loads everything
		}
		u := Update{Names: b.proj.Summaries(names), Counts: b.proj.Counts()}
		present := map[string]bool{}
		for _, s := range u.Names {
			present[s.Name] = true
		}
		for _, n := range names {
			if !present[n] {
				u.Removed = append(u.Removed, n)
			}
		}
		data, err := json.Marshal(u)
		if err != nil {
			continue
		}
		b.mu.Lock()
		for c := range b.clients {
			select {
			case c <- data:
			default: // too slow: dropped; its browser reconnects and reloads
				delete(b.clients, c)
				close(c)
			}
		}
		b.mu.Unlock()
	}
}

// watched says whether any page is connected.
func (b *broker) watched() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.clients) > 0
}

func (b *broker) serve(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	c := make(chan []byte, 64)
	b.mu.Lock()
	b.clients[c] = struct{}{}
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		if _, ok := b.clients[c]; ok {
			delete(b.clients, c)
			close(c)
		}
		b.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	fmt.Fprint(w, "retry: 2000\n: connected\n\n")
	flusher.Flush()
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keepalive.C:
			fmt.Fprint(w, ": keepalive\n\n")
		case data, ok := <-c:
			if !ok {
				return
			}
			fmt.Fprintf(w, "event: names\ndata: %s\n\n", data)
		}
		flusher.Flush()
	}
}
