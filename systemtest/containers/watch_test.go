package containers

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/zonestream/zonestream/testenv/bind"
)

// recordWatch polls BIND, over and over until stopped, for every name it
// is told is wanted. Once a name has answered its address it must keep
// answering it until it is released (its Service deleted): each time it
// does not is a record lost, whenever it happens, not only when a test
// looks.
type recordWatch struct {
	dns  *bind.Server
	mu   sync.Mutex
	want map[string]string // wanted, not yet answered
	held map[string]string // answered once, so answered from then on
	lost []string
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func watchRecords(t *testing.T, server *bind.Server) *recordWatch {
	w := &recordWatch{dns: server, want: map[string]string{}, held: map[string]string{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	t.Cleanup(func() { w.finish() })
	return w
}

func (w *recordWatch) wanted(host, ip string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.want[host] = ip
}

// release stops watching host: call it before the Service is deleted.
func (w *recordWatch) release(host string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.want, host)
	delete(w.held, host)
}

func (w *recordWatch) heldCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.held)
}

// finish stops the watch and returns the records lost on the way.
func (w *recordWatch) finish() []string {
	w.once.Do(func() { close(w.stop) })
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lost
}

func (w *recordWatch) run() {
	defer close(w.done)
	for {
		select {
		case <-w.stop:
			return
		case <-time.After(100 * time.Millisecond):
		}
		w.mu.Lock()
		names := make(map[string]string, len(w.want)+len(w.held))
		for h, ip := range w.want {
			names[h] = ip
		}
		for h, ip := range w.held {
			names[h] = ip
		}
		w.mu.Unlock()
		for host, ip := range names {
			got, err := w.answer(host)
			w.mu.Lock()
			switch {
			case w.held[host] == ip && got != ip:
				w.lost = append(w.lost, fmt.Sprintf("%s answered %q (%v) at %s after it had answered %s",
					host, got, err, time.Now().Format(time.TimeOnly), ip))
				delete(w.held, host) // reported once

			case w.want[host] == ip && got == ip:
				delete(w.want, host)
				w.held[host] = ip
			}
			w.mu.Unlock()
		}
	}
}

func (w *recordWatch) answer(host string) (string, error) {
	rrs, err := w.dns.Query(host, dns.TypeA)
	if err != nil {
		return "", err
	}
	for _, rr := range rrs {
		if a, ok := rr.(*dns.A); ok {
			return a.A.String(), nil
		}
	}
	return "", nil
}
