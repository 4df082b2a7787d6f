package events

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// WatchOption tunes Watch.
type WatchOption func(*jetstream.OrderedConsumerConfig)

// HeadersOnly delivers headers without payloads: enough to learn the hash
// of every key's last state.
func HeadersOnly() WatchOption {
	return func(c *jetstream.OrderedConsumerConfig) { c.HeadersOnly = true }
}

// A watch pulls at two paces. Until it has caught up, and for
// atRest.after after it (re)started, it uses nats.go's: 30 s pull
// requests, a heartbeat every 5 s, so that a pull stranded on a server
// that has just restarted is replaced within seconds (TestChaos, NATS
// killed). Then it follows at rest's pace: a pull request every
// atRest.expiry and a heartbeat every atRest.heartbeat, two wake-ups a
// minute per watch instead of twelve. A reconnect brings the
// short pace back.
var atRest = restPace{after: 2 * time.Minute, expiry: 2 * time.Minute, heartbeat: 30 * time.Second}

type restPace struct{ after, expiry, heartbeat time.Duration }

// Watch replays the last message of every subject in stream matching
// filters (replayPolicy), then follows new messages, calling fn for each
// from one goroutine. The returned channel is closed once the replay is done: what
// fn has seen by then is the stream's state when Watch was called. Watch
// stops when ctx ends; a broken consumer is recreated by the client.
func Watch(ctx context.Context, js jetstream.JetStream, stream string, filters []string, fn func(Received), opts ...WatchOption) (<-chan struct{}, error) {
	w, err := startWatch(ctx, js, stream, filters, fn, opts...)
	if err != nil {
		return nil, err
	}
	return w.caughtUp, nil
}

func startWatch(ctx context.Context, js jetstream.JetStream, stream string, filters []string, fn func(Received), opts ...WatchOption) (*watch, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", stream, err)
	}
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects: narrowFilters(filters, st.CachedInfo().Config.Subjects),
		DeliverPolicy:  replayPolicy(st.CachedInfo().Config),
	}
	for _, o := range opts {
		o(&cfg)
	}
	w := &watch{js: js, stream: stream, cfg: cfg, fn: fn, rest: atRest, cut: cutOffRule,
		onCutOff: cutOffHandler(ctx), caughtUp: make(chan struct{})}
	if err := w.start(ctx, false, false); err != nil {
		return nil, err
	}
	info, err := w.cons.Info(ctx)
	if err != nil {
		w.iter.Stop()
		return nil, fmt.Errorf("watch %s: %w", stream, err)
	}
	if info.NumPending == 0 && info.Delivered.Consumer == 0 {
		w.done()
	}
	go w.follow(ctx)
	go w.guard(ctx)
	return w, nil
}

// replayPolicy is how a watch reads a stream's history: the last message
// of every subject. A stream that keeps one message per subject (the state
// streams) holds nothing else, and is read from its first message instead:
// the same messages, without the list of last sequences nats-server makes
// for a last-per-subject consumer when it is created, and a replay that
// can go on after the last message it delivered when its consumer is made
// again (checkReplay).
func replayPolicy(cfg jetstream.StreamConfig) jetstream.DeliverPolicy {
	if cfg.MaxMsgsPerSubject == 1 {
		return jetstream.DeliverAllPolicy
	}
	return jetstream.DeliverLastPerSubjectPolicy
}

// narrowFilters returns the filters a consumer needs to select what
// filters select on a stream of subjects: none when they name every
// subject of the stream. nats-server walks a consumer with several filters
// past the stream's deleted messages about a hundred times slower than one
// with one filter or none, and a state stream is mostly deleted messages
// once many keys have come and gone (a restarted planner replayed
// ZS_OBSERVED at a thousand messages a second), so a watch of the whole
// stream asks for it whole.
func narrowFilters(filters, subjects []string) []string {
	if len(subjects) > 0 && !slices.ContainsFunc(subjects, func(s string) bool { return !slices.Contains(filters, s) }) {
		return nil
	}
	return filters
}

// watch is one Watch: an ordered consumer, started again after the last
// message it delivered to change its pace, and from the last message of
// every subject when the stream went back in time.
type watch struct {
	js       jetstream.JetStream
	stream   string
	cfg      jetstream.OrderedConsumerConfig
	fn       func(Received)
	rest     restPace
	cut      cutOffTimes
	onCutOff func(error) // nil: start over alone
	caughtUp chan struct{}
	once     sync.Once

	mu      sync.Mutex
	cons    jetstream.Consumer
	iter    jetstream.MessagesContext
	history uint64    // the stream's last sequence when the watch began
	seen    uint64    // the highest sequence delivered
	seenAt  time.Time // when the stream stored it
	// Ends when the connection loses the server the consumer was made
	// on: what that consumer delivers afterwards is not handed on until
	// the guard has checked what the server still holds.
	life context.Context
	// The last message fn has returned from (or that was skipped): its
	// consumer and its sequence there (checkReplay).
	handledBy  string
	handledSeq uint64
	active     time.Time          // when the consumer last started or delivered a message
	recounts   int                // consumers made again since the last message (checkReplay)
	stopIter   context.CancelFunc // ends the current iterator's Pump
	quiet      bool               // the consumer pulls at rest's pace
	level      time.Time          // when the server last had nothing more for the watch (cutoff.go)
	cutOff     bool               // handed to onCutOff: fn gets nothing more
	// What follow starts once the iterator stops: again (a restart was
	// asked for), at rest's pace or not, over from scratch or not.
	again, nextQuiet, nextOver bool
}

func (w *watch) done() { w.once.Do(func() { close(w.caughtUp) }) }

func (w *watch) isCaughtUp() bool {
	select {
	case <-w.caughtUp:
		return true
	default:
		return false
	}
}

// start creates the consumer. At first, or over, it begins with the last
// message of every subject, and what is in the stream now is history.
// Once caught up it resumes after the last message delivered; within the
// replay, from the last message of every subject again (what was
// delivered already is skipped), so that no older state of a key is read.
func (w *watch) start(ctx context.Context, quiet, over bool) error {
	begun := time.Now()
	w.mu.Lock()
	cfg, seen, history, fresh := w.cfg, w.seen, w.history, over || w.iter == nil
	w.mu.Unlock()
	if fresh {
		st, err := w.js.Stream(ctx, w.stream)
		if err != nil {
			return fmt.Errorf("watch %s: %w", w.stream, err)
		}
		history = st.CachedInfo().State.LastSeq
	} else if w.isCaughtUp() {
		// Every message up to history was delivered or has a newer one
		// after it: starting past both reads no older state of a key.
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, max(seen, history)+1
	} else if cfg.DeliverPolicy == jetstream.DeliverAllPolicy && seen > 0 {
		// A replay of every message goes on after the last delivered.
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, seen+1
	}
	cfg.NamePrefix = ConsumerNamePrefix()
	life := context.Background()
	if nc := w.js.Conn(); nc != nil {
		life = untilDisconnect(nc)
	}
	cons, err := w.js.OrderedConsumer(ctx, w.stream, cfg)
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.stream, err)
	}
	var pace []jetstream.PullMessagesOpt
	if quiet {
		pace = []jetstream.PullMessagesOpt{jetstream.PullExpiry(w.rest.expiry), jetstream.PullHeartbeat(w.rest.heartbeat)}
	}
	iter, err := cons.Messages(pace...)
	if err != nil {
		return fmt.Errorf("watch %s: %w", w.stream, err)
	}
	w.mu.Lock()
	w.cons, w.iter, w.quiet, w.active, w.life = cons, iter, quiet, time.Now(), life
	if fresh {
		// A replay reads the last message of every subject as it is now:
		// the watch misses nothing stored before it began.
		w.history, w.seen, w.seenAt, w.level = history, 0, time.Time{}, begun
	}
	w.mu.Unlock()
	return nil
}

// restart ends the iterator so that follow starts the consumer again;
// from scratch when over is set. Caller holds w.mu.
func (w *watch) restart(quiet, over bool) {
	w.again, w.nextQuiet, w.nextOver = true, quiet, w.nextOver || over
	if w.stopIter != nil {
		w.stopIter()
	}
}

// follow hands every message to fn until ctx ends, starting the consumer
// again when asked to (restart).
func (w *watch) follow(ctx context.Context) {
	for {
		ictx, stop := context.WithCancel(ctx)
		w.mu.Lock()
		iter := w.iter
		w.stopIter = stop
		if w.again {
			stop() // asked for while the consumer started
		}
		w.mu.Unlock()
		_ = Pump(ictx, iter, w.deliver, nil)
		stop()
		if ctx.Err() != nil {
			return
		}
		w.mu.Lock()
		again, quiet, over := w.again, w.nextQuiet, w.nextOver
		w.again, w.nextOver = false, false
		w.mu.Unlock()
		if !again {
			return // the iterator ended by itself
		}
		for w.start(ctx, quiet, over) != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}
}

// deliver hands one message to fn. A message the restarted consumer
// delivers again (the iterator had it buffered when stopped) is skipped,
// and so is what the consumer delivers once its server is lost: the
// guard starts it again after checking what the server still holds.
func (w *watch) deliver(msg jetstream.Msg) {
	meta, err := msg.Metadata()
	if err != nil {
		return
	}
	w.mu.Lock()
	if w.life.Err() != nil {
		w.mu.Unlock()
		return
	}
	if meta.Sequence.Stream <= w.seen || w.cutOff {
		w.handledBy, w.handledSeq = meta.Consumer, meta.Sequence.Consumer
		w.mu.Unlock()
		return
	}
	w.seen, w.seenAt, w.active, w.recounts = meta.Sequence.Stream, meta.Timestamp, time.Now(), 0
	switch {
	case meta.NumPending == 0:
		w.level = w.active
	case meta.Timestamp.After(w.level):
		// Behind, but everything stored before this message is read
		// (cutoff.go).
		w.level = meta.Timestamp
	}
	history := w.history
	w.mu.Unlock()
	w.fn(Received{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data(),
		Seq: meta.Sequence.Stream, Pending: meta.NumPending, Time: meta.Timestamp,
		Live: meta.Sequence.Stream > history})
	w.mu.Lock()
	w.handledBy, w.handledSeq = meta.Consumer, meta.Sequence.Consumer
	w.mu.Unlock()
	if meta.NumPending == 0 {
		w.done()
	}
}

// replayCheck is how long a replay may see no message before the watch
// asks the server whether anything is left for it (checkReplay);
// recountAfter, how long before it stops believing the server's count.
const (
	replayCheck  = time.Second
	recountAfter = 5 * time.Second
)

// checkReplay ends a replay that has nothing left to deliver though no
// message said so. A message's pending count is the server's running count
// when it sent it, and messages removed under a consumer (tombstones
// expiring, by the thousand in a long run) can leave it too high: the
// last message then names messages that will never come, and the replay
// would wait for the stream's next one. The collector reading back its
// own sources after a restart, where nothing else publishes, waited
// forever. The consumer's info settles it (nats-server bounds its count
// by what the stream still holds); a count that stays above zero while
// nothing comes is made again by a new consumer, after the last message
// delivered.
func (w *watch) checkReplay(ctx context.Context) {
	w.mu.Lock()
	cons, idle, recounts := w.cons, time.Since(w.active), w.recounts
	w.mu.Unlock()
	if w.isCaughtUp() || cons == nil || idle < replayCheck {
		return
	}
	ictx, cancel := context.WithTimeout(ctx, replayCheck)
	defer cancel()
	info, err := cons.Info(ictx)
	if err != nil {
		return
	}
	w.mu.Lock()
	// Every message the consumer sent has been through deliver: none
	// waits in the client's buffer.
	handedAll := info.Delivered.Consumer == 0 || info.Name == w.handledBy && info.Delivered.Consumer <= w.handledSeq
	// Each recount in a row waits twice as long: a server slow to find the
	// next message is not interrupted forever.
	patience := recountAfter << min(recounts, 4)
	verdict := replayVerdict(info.NumPending, handedAll, idle >= patience, w.cfg.DeliverPolicy == jetstream.DeliverAllPolicy)
	if verdict == replayRecount && !w.again {
		w.recounts++
		w.restart(false, false)
		ReplaysSettled.WithLabelValues(w.stream, "recount").Inc()
	}
	w.mu.Unlock()
	// A message may have said "nothing pending" meanwhile: count only
	// the replays this check ended.
	if verdict == replayDone && !w.isCaughtUp() {
		w.done()
		ReplaysSettled.WithLabelValues(w.stream, "done").Inc()
	}
}

// ReplaysSettled counts the replays checkReplay settled, by stream and
// how: "done" (the consumer had nothing pending), "recount" (a consumer
// made again because its count brought nothing). Each is a replay that
// would have waited for the stream's next message.
var ReplaysSettled = promauto.NewCounterVec(prometheus.CounterOpts{
	Name: "zonestream_watch_replays_settled_total",
	Help: "replays no message said were done, settled by asking the consumer (how=done) or by making it again (how=recount), by stream",
}, []string{"stream", "how"})

// What checkReplay does about a replay that has gone quiet.
type replayAction int

const (
	replayWait    replayAction = iota // messages are on their way, or fn is busy
	replayDone                        // the server has nothing more, and fn had all it sent
	replayRecount                     // the server's count says more, but nothing comes
)

// replayVerdict decides from the server's pending count, whether fn has
// had every message the server sent, and whether nothing came for longer
// than the watch trusts the count. Only a replay that reads every message
// may resume after the last one delivered; a last-per-subject replay
// would start over, and waits.
func replayVerdict(pending uint64, handedAll, distrust, resumable bool) replayAction {
	if !handedAll {
		return replayWait
	}
	switch {
	case pending == 0:
		return replayDone
	case distrust && resumable:
		return replayRecount
	}
	return replayWait
}

// guard sets the watch's pace and keeps it whole. After NATS reconnected
// it starts the consumer again at the short pace: after the last message
// delivered if the stream still holds it (holdsLastSeen), else from the
// last message of every subject (the server restarted and lost messages
// it had acknowledged; each message is the whole state of its key, so
// reading one again is harmless). atRest.after after a start, once caught
// up, it goes to rest's pace. Whenever it wakes, and every cut.probe, it
// checks that the watch is not cut off (cutoff.go) before it lets it go
// on.
func (w *watch) guard(ctx context.Context) {
	nc := w.js.Conn()
	if nc == nil {
		return
	}
	// Told by the connection rather than polling it: a watch at rest wakes
	// nobody.
	connected := nc.StatusChanged(nats.CONNECTED)
	defer nc.RemoveStatusListener(connected)
	rest := time.NewTimer(w.rest.after)
	defer rest.Stop()
	probe := time.NewTicker(w.cut.probe)
	defer probe.Stop()
	// Until the replay is done, a check that it is not waiting for a
	// message that will never come.
	replay := time.NewTicker(replayCheck)
	defer replay.Stop()
	replayed := w.caughtUp
	var retry <-chan time.Time // while a check could not ask the server
	for {
		select {
		case <-ctx.Done():
			return
		case <-replayed:
			replay.Stop()
			replayed = nil
			continue
		case <-replay.C:
			w.checkReplay(ctx)
			continue
		case <-probe.C:
			if !w.checkLevel(ctx) {
				return
			}
			continue
		case <-rest.C:
			if !w.isCaughtUp() {
				rest.Reset(w.rest.after)
				continue
			}
			w.mu.Lock()
			if !w.quiet && !w.again {
				w.restart(true, false)
			}
			w.mu.Unlock()
			continue
		case _, ok := <-connected:
			if !ok {
				return // the connection closed
			}
		case <-retry:
		}
		retry = nil
		if !w.checkLevel(ctx) {
			return
		}
		held, err := w.holdsLastSeen(ctx)
		if err != nil {
			retry = time.After(time.Second)
			continue
		}
		w.mu.Lock()
		w.restart(false, !held)
		w.mu.Unlock()
		rest.Reset(w.rest.after)
	}
}

// holdsLastSeen reports whether the stream still holds the last message
// the watch delivered, stored when it was. A server that restarted after
// losing messages hands their sequences out again, and a consumer resuming
// after the highest sequence delivered would skip what came in their
// place. The stream's last sequence cannot tell once publishers have
// filled the gap again, which they do at once after a reconnect; the
// message at that sequence can. JetStream loses the end of a store, never
// a middle, so if that message is there, so is every one before it. One
// that was since replaced on its subject counts as lost: the watch reads
// every subject again, which is only slower.
func (w *watch) holdsLastSeen(ctx context.Context) (bool, error) {
	w.mu.Lock()
	seq, at := w.seen, w.seenAt
	w.mu.Unlock()
	if seq == 0 {
		return true, nil
	}
	first, err := firstFrom(ctx, w.js, w.stream, w.cfg.FilterSubjects, seq)
	if err != nil || first == nil {
		return false, err
	}
	meta, err := first.Metadata()
	return err == nil && meta.Sequence.Stream == seq && meta.Timestamp.Equal(at), nil
}

// checkLevel checks that the watch is not cut off, asking the server whether
// it has anything left for the watch when nothing said so for a while.
// It returns false once the watch is cut off and handed to onCutOff:
// nothing more is delivered. Without onCutOff it starts over and goes on.
func (w *watch) checkLevel(ctx context.Context) bool {
	asked := time.Now()
	w.mu.Lock()
	since, cons := asked.Sub(w.level), w.cons
	w.mu.Unlock()
	if since > w.cut.after {
		return w.cutOffNow(since)
	}
	if since < w.cut.probe || cons == nil {
		return true
	}
	ictx, cancel := context.WithTimeout(ctx, w.cut.probe)
	defer cancel()
	if info, err := cons.Info(ictx); err == nil && info.NumPending == 0 {
		w.mu.Lock()
		if asked.After(w.level) {
			w.level = asked
		}
		w.mu.Unlock()
	}
	return true
}

func (w *watch) cutOffNow(since time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.onCutOff == nil {
		w.level = time.Now()
		w.restart(false, true)
		return true
	}
	w.cutOff = true
	w.again = false
	if w.stopIter != nil {
		w.stopIter()
	}
	go w.onCutOff(fmt.Errorf("watch %s: not level with the stream for %s: %w", w.stream, since.Round(time.Second), ErrCutOff))
	return false
}
