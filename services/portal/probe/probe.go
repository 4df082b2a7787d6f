// Package probe asks DNS what it answers for each name: a bounded pool of
// workers, a timeout per query, checks spread over time, and a name that
// changed checked again soon.
package probe

import (
	"container/heap"
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Options tune the prober.
type Options struct {
	// Workers is how many queries may be in flight at once.
	Workers int
	// Interval is how often each name is checked again when nothing
	// changed; each check lands at a random point of ±20% around it.
	Interval time.Duration
	// Soon is the most a changed name waits before it is checked: the
	// checks after a burst of changes spread over it.
	Soon time.Duration
}

// Checker checks one name. It is called from the worker pool.
type Checker func(ctx context.Context, name string)

// Prober schedules checks of names.
type Prober struct {
	opts  Options
	check Checker

	mu    sync.Mutex
	queue schedule
	at    map[string]*item
	wake  chan struct{}
}

// New returns a prober that calls check for each name when it is due.
func New(opts Options, check Checker) *Prober {
	opts.Workers = max(opts.Workers, 1)
	if opts.Interval <= 0 {
		opts.Interval = time.Minute
	}
	if opts.Soon <= 0 {
		opts.Soon = time.Second
	}
	return &Prober{opts: opts, check: check, at: map[string]*item{}, wake: make(chan struct{}, 1)}
}

// Changed asks for name to be checked soon.
func (p *Prober) Changed(name string) {
	p.schedule(name, time.Now().Add(jitter(p.opts.Soon)), true)
}

// Forget stops checking name.
func (p *Prober) Forget(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if it, ok := p.at[name]; ok {
		heap.Remove(&p.queue, it.index)
		delete(p.at, name)
	}
}

func (p *Prober) schedule(name string, when time.Time, sooner bool) {
	p.mu.Lock()
	if it, ok := p.at[name]; ok {
		if !sooner || !when.Before(it.when) {
			p.mu.Unlock()
			return
		}
		it.when = when
		heap.Fix(&p.queue, it.index)
	} else {
		it := &item{name: name, when: when}
		heap.Push(&p.queue, it)
		p.at[name] = it
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run checks names as they fall due until ctx ends.
func (p *Prober) Run(ctx context.Context) {
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range p.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range jobs {
				p.check(ctx, name)
				// Checked again later, unless it changed meanwhile.
				p.schedule(name, time.Now().Add(p.opts.Interval*4/5+jitter(p.opts.Interval*2/5)), false)
			}
		}()
	}
	defer wg.Wait()
	defer close(jobs)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		name, wait := p.next()
		if name != "" {
			select {
			case jobs <- name:
				continue
			case <-ctx.Done():
				return
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		case <-timer.C:
		}
	}
}

// next pops the name due now, or says how long until one is.
func (p *Prober) next() (string, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		return "", time.Hour
	}
	it := p.queue[0]
	if wait := time.Until(it.when); wait > 0 {
		return "", wait
	}
	heap.Pop(&p.queue)
	delete(p.at, it.name)
	return it.name, 0
}

func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d)
}

// item is one name's next check.
type item struct {
	name  string
	when  time.Time
	index int
}

// schedule is a min-heap of checks by time.
type schedule []*item

func (s schedule) Len() int           { return len(s) }
func (s schedule) Less(i, j int) bool { return s[i].when.Before(s[j].when) }
func (s schedule) Swap(i, j int) {
	s[i], s[j] = s[j], s[i]
	s[i].index, s[j].index = i, j
}
func (s *schedule) Push(x any) {
	it := x.(*item)
	it.index = len(*s)
	*s = append(*s, it)
}
func (s *schedule) Pop() any {
	old := *s
	it := old[len(old)-1]
	*s = old[:len(old)-1]
	return it
}
