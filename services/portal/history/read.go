package history

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// maxPerSubject bounds what is read of one subject: the state streams
// keep a few states per subject, the results of a zone may be many.
const maxPerSubject = 16

// maxResults bounds the results of a zone read to find one plan's.
const maxResults = 512

// ownershipPrefixes are the ExternalDNS TXT registry's names for the
// ownership records of a name ("a-web.example.org").
var ownershipPrefixes = []string{"", "a-", "aaaa-", "cname-", "txt-"}

// Read gathers the history of name from the streams. extra are entries the
// caller knows of that the streams no longer hold (the portal keeps the
// plans it saw: the plans stream forgets a plan once it is applied).
func Read(ctx context.Context, js jetstream.JetStream, name string, extra ...Entry) ([]Entry, error) {
	name = events.NormalizeName(name)
	r := reader{ctx: ctx, js: js, streams: map[string]jetstream.Stream{}}
	entries := slices.Clone(extra)
	desired, err := r.subject(events.StreamDesired, events.DesiredSubject(name))
	if err != nil {
		return nil, err
	}
	var objects []events.ObjectRef
	for _, m := range desired {
		var d events.DesiredState
		if err := events.Unmarshal(m.Header, m.Data, &d); err != nil {
			entries = append(entries, undecodable(KindDesired, m, err))
			continue
		}
		entries = append(entries, entry(KindDesired, m, &d, desiredSummary(&d)))
		objects = append(objects, d.Contributors...)
		for _, l := range d.Losers {
			objects = append(objects, l.Object)
		}
	}
	slices.SortFunc(objects, events.CompareRefs)
	for _, obj := range slices.Compact(objects) {
		msgs, err := r.subject(events.StreamSources, obj.Subject())
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			var s events.SourceState
			if err := events.Unmarshal(m.Header, m.Data, &s); err != nil {
				entries = append(entries, undecodable(KindSource, m, err))
				continue
			}
			entries = append(entries, entry(KindSource, m, &s, sourceSummary(obj, name, &s)))
		}
	}
	observed, err := r.observed(name)
	if err != nil {
		return nil, err
	}
	entries = append(entries, observed...)
	results, err := r.results(observed, entries)
	if err != nil {
		return nil, err
	}
	return link(append(entries, results...)), nil
}

type reader struct {
	ctx     context.Context
	js      jetstream.JetStream
	streams map[string]jetstream.Stream
}

func (r *reader) stream(name string) (jetstream.Stream, error) {
	if s, ok := r.streams[name]; ok {
		return s, nil
	}
	s, err := r.js.Stream(r.ctx, name)
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", name, err)
	}
	r.streams[name] = s
	return s, nil
}

// subject reads every message stream keeps on subject, oldest first, one
// "next message for this subject" request each: the server finds them by
// its subject index.
func (r *reader) subject(stream, subject string) ([]*jetstream.RawStreamMsg, error) {
	st, err := r.stream(stream)
	if err != nil {
		return nil, err
	}
	var out []*jetstream.RawStreamMsg
	for seq := uint64(1); len(out) < maxPerSubject; {
		m, err := st.GetMsg(r.ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", subject, err)
		}
		out = append(out, m)
		seq = m.Sequence + 1
	}
	return out, nil
}

// observed reads what each provider held at the name and its ownership
// records.
func (r *reader) observed(name string) ([]Entry, error) {
	st, err := r.stream(events.StreamObserved)
	if err != nil {
		return nil, err
	}
	info, err := st.Info(r.ctx, jetstream.WithSubjectFilter(events.SubjectZones+".>"))
	if err != nil {
		return nil, err
	}
	var entries []Entry
	for zs := range info.State.Subjects {
		provider, err := events.UnescapeToken(strings.TrimPrefix(zs, events.SubjectZones+"."))
		if err != nil {
			continue
		}
		for _, prefix := range ownershipPrefixes {
			msgs, err := r.subject(events.StreamObserved, events.ObservedSubject(provider, prefix+name))
			if err != nil {
				return nil, err
			}
			for _, m := range msgs {
				var o events.ObservedState
				if err := events.Unmarshal(m.Header, m.Data, &o); err != nil {
					entries = append(entries, undecodable(KindObserved, m, err))
					continue
				}
				entries = append(entries, entry(KindObserved, m, &o, observedSummary(&o)))
			}
		}
	}
	return entries, nil
}

// results finds the result of every plan that caused an observed state:
// the applier publishes the result just before it stores what the
// provider holds.
func (r *reader) results(observed, known []Entry) ([]Entry, error) {
	seen := map[string]bool{}
	for _, e := range known {
		if e.Kind == KindResult {
			seen[e.Causation] = true
		}
	}
	var out []Entry
	for _, o := range observed {
		if o.Causation == "" || seen[o.Causation] {
			continue
		}
		seen[o.Causation] = true
		obs := o.Event.(*events.ObservedState)
		m, err := r.resultOf(obs.Provider, obs.Zone, o.Causation, o.Time)
		if err != nil {
			return nil, err
		}
		if m == nil {
			continue
		}
		var res events.Result
		if err := events.Unmarshal(m.Header, m.Data, &res); err != nil {
			out = append(out, undecodable(KindResult, m, err))
			continue
		}
		e := entry(KindResult, m, &res, resultSummary(&res))
		e.PlanID = res.PlanID
		out = append(out, e)
	}
	return out, nil
}

// resultOf reads the zone's results from a second before after on, up
// to maxResults of them, for the one caused by planEvent: a plan's result
// is stored just before what the provider holds after it (which the
// result carries), but another stream may be stored on another server
// (clocks, order). A zone has one pass out at a time, each waiting for
// the provider's answers, so a second holds at most a few hundred of its
// results. They are scanned by their headers alone (a result carries up
// to a plan's worth of observed states), and only the one found is read.
func (r *reader) resultOf(provider, zone, planEvent string, after time.Time) (*jetstream.RawStreamMsg, error) {
	start := after.Add(-time.Second)
	var seq uint64
	err := r.scan(events.ResultSubject(provider, zone), jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &start, HeadersOnly: true,
	}, maxResults, func(m *jetstream.RawStreamMsg) {
		if seq == 0 && m.Header.Get(events.HeaderCausation) == planEvent {
			seq = m.Sequence
		}
	})
	if err != nil || seq == 0 {
		return nil, err
	}
	var found *jetstream.RawStreamMsg
	err = r.scan(events.ResultSubject(provider, zone), jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: seq,
	}, 1, func(m *jetstream.RawStreamMsg) { found = m })
	return found, err
}

// scan hands fn up to n messages of subject on the results stream, from
// where cfg starts, as they are now (it does not wait for more).
func (r *reader) scan(subject string, cfg jetstream.OrderedConsumerConfig, n int, fn func(*jetstream.RawStreamMsg)) error {
	cfg.FilterSubjects, cfg.NamePrefix = []string{subject}, events.ConsumerNamePrefix()
	cons, err := r.js.OrderedConsumer(r.ctx, events.StreamResults, cfg)
	if err != nil {
		return fmt.Errorf("results of %s: %w", subject, err)
	}
	// Its consumer goes at once rather than when the server notices it idle.
	defer func() { _ = r.js.DeleteConsumer(r.ctx, events.StreamResults, cons.CachedInfo().Name) }()
	batch, err := cons.FetchNoWait(n)
	if err != nil {
		return fmt.Errorf("results of %s: %w", subject, err)
	}
	for m := range batch.Messages() {
		raw := &jetstream.RawStreamMsg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()}
		if meta, err := m.Metadata(); err == nil {
			raw.Sequence, raw.Time = meta.Sequence.Stream, meta.Timestamp
		}
		fn(raw)
	}
	return batch.Error()
}

func entry(kind Kind, m *jetstream.RawStreamMsg, ev any, summary string) Entry {
	return Entry{Kind: kind, Subject: m.Subject, Seq: m.Sequence, Time: m.Time,
		EventID: m.Header.Get(events.HeaderEventID), Causation: m.Header.Get(events.HeaderCausation),
		Summary: summary, Event: ev}
}

func undecodable(kind Kind, m *jetstream.RawStreamMsg, err error) Entry {
	return entry(kind, m, nil, "undecodable: "+err.Error())
}
