package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/events/routing"
	"github.com/zonestream/zonestream/services/portal/history"
)

// Explanation is everything the bus knows about one DNS name, gathered
// from the last message of each subject that speaks of it.
type Explanation struct {
	Name     string                         `json:"name"`
	Desired  *stored[events.DesiredState]   `json:"desired,omitempty"`
	Sources  []stored[events.SourceState]   `json:"sources,omitempty"`
	Observed []stored[events.ObservedState] `json:"observed,omitempty"`
	// Route is where the name goes by the providers' zone lists, and why.
	Route *Route `json:"route,omitempty"`
	// History is every event about the name the streams keep, newest
	// first, each with the event that caused it.
	History []history.Entry `json:"history,omitempty"`
}

// stored is an event with where and when it was stored.
type stored[T any] struct {
	Subject   string    `json:"subject"`
	Seq       uint64    `json:"seq"`
	Time      time.Time `json:"time"`
	EventID   string    `json:"eventId,omitempty"`
	Causation string    `json:"causationId,omitempty"`
	Event     T         `json:"event"`
}

func explain(args []string) error {
	cmd := newOperatorCommand("explain", "zonestream explain [--json] NAME")
	asJSON := cmd.fs.Bool("json", false, "print JSON instead of text")
	name, ok, err := cmd.parse(args)
	if !ok {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, js, err := cmd.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	ex, err := ExplainName(ctx, js, name)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(ex)
	}
	ex.print(os.Stdout)
	return nil
}

// ExplainName gathers what the bus says about name: its desired state, the
// last state of every object behind it, and what every provider holds at
// the name and at its ownership records.
func ExplainName(ctx context.Context, js jetstream.JetStream, name string) (*Explanation, error) {
	name = events.NormalizeName(name)
	ex := &Explanation{Name: name}
	var d events.DesiredState
	if s, err := lastEvent(ctx, js, events.StreamDesired, events.DesiredSubject(name), &d); err != nil {
		return nil, err
	} else if s != nil {
		ex.Desired = &stored[events.DesiredState]{Subject: s.Subject, Seq: s.Seq, Time: s.Time,
			EventID: s.EventID, Causation: s.Causation, Event: d}
		refs := slices.Clone(d.Contributors)
		for _, l := range d.Losers {
			refs = append(refs, l.Object)
		}
		for _, ref := range refs {
			var src events.SourceState
			s, err := lastEvent(ctx, js, events.StreamSources, ref.Subject(), &src)
			if err != nil {
				return nil, err
			}
			if s != nil {
				ex.Sources = append(ex.Sources, stored[events.SourceState]{Subject: s.Subject, Seq: s.Seq, Time: s.Time,
					EventID: s.EventID, Causation: s.Causation, Event: src})
			}
		}
	}
	providers, err := subjectsUnder(ctx, js, events.StreamObserved, events.SubjectZones+".>")
	if err != nil {
		return nil, err
	}
	table := routing.New()
	for _, zs := range providers {
		provider, err := events.UnescapeToken(strings.TrimPrefix(zs, events.SubjectZones+"."))
		if err != nil {
			continue
		}
		var zl events.ZoneList
		if _, err := lastEvent(ctx, js, events.StreamObserved, zs, &zl); err != nil {
			return nil, err
		}
		table.Set(&zl)
		// The name itself, and where ExternalDNS-style ownership lives.
		names := []string{name}
		for _, t := range []string{"a", "aaaa", "cname", "txt", "srv"} {
			names = append(names, t+"-"+name)
		}
		for _, n := range names {
			var o events.ObservedState
			s, err := lastEvent(ctx, js, events.StreamObserved, events.ObservedSubject(provider, n), &o)
			if err != nil {
				return nil, err
			}
			if s != nil && len(o.Records) > 0 {
				ex.Observed = append(ex.Observed, stored[events.ObservedState]{Subject: s.Subject, Seq: s.Seq, Time: s.Time,
					EventID: s.EventID, Causation: s.Causation, Event: o})
			}
		}
	}
	var namespaces []string
	if ex.Desired != nil {
		namespaces = routing.Namespaces(ex.Desired.Event.Contributors)
	}
	ex.Route = routeOf(table, name, namespaces)
	if ex.History, err = history.Read(ctx, js, name); err != nil {
		return nil, err
	}
	return ex, nil
}

type meta struct {
	Subject, EventID, Causation string
	Seq                         uint64
	Time                        time.Time
}

// lastEvent decodes the last message on subject into ev; nil if there is none.
func lastEvent(ctx context.Context, js jetstream.JetStream, stream, subject string, ev events.Event) (*meta, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	msg, err := st.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", subject, err)
	}
	if err := events.Unmarshal(msg.Header, msg.Data, ev); err != nil {
		return nil, fmt.Errorf("%s: %w", subject, err)
	}
	return &meta{Subject: subject, Seq: msg.Sequence, Time: msg.Time,
		EventID: msg.Header.Get(events.HeaderEventID), Causation: msg.Header.Get(events.HeaderCausation)}, nil
}

// subjectsUnder lists the subjects of stream matching filter.
func subjectsUnder(ctx context.Context, js jetstream.JetStream, stream, filter string) ([]string, error) {
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return nil, err
	}
	var out []string
	for s := range info.State.Subjects {
		out = append(out, s)
	}
	slices.Sort(out)
	return out, nil
}

func (ex *Explanation) print(w io.Writer) {
	fmt.Fprintf(w, "%s\n", ex.Name)
	if ex.Desired == nil {
		fmt.Fprintf(w, "  wanted by: nothing on the bus has ever wanted it\n")
	} else {
		d := ex.Desired.Event
		fmt.Fprintf(w, "  desired (%s, seq %d, %s):\n", ex.Desired.Subject, ex.Desired.Seq, ex.Desired.Time.Format(time.RFC3339))
		if len(d.Endpoints) == 0 {
			fmt.Fprintf(w, "    nothing any more (tombstone)\n")
		}
		for _, ep := range d.Endpoints {
			fmt.Fprintf(w, "    %-6s %s%s\n", ep.RecordType, strings.Join(ep.Targets, " "), ttl(ep.RecordTTL))
		}
		for _, c := range d.Contributors {
			fmt.Fprintf(w, "  wanted by: %s in cluster %s\n", c.Resource(), c.Cluster)
		}
		for _, l := range d.Losers {
			fmt.Fprintf(w, "  outranked: %s in cluster %s: %s\n", l.Object.Resource(), l.Object.Cluster, l.Reason)
		}
		for _, o := range d.Holders {
			fmt.Fprintf(w, "  owned by: %s\n", owner(d.DNSName, o))
		}
	}
	for _, s := range ex.Sources {
		fmt.Fprintf(w, "  object %s (seq %d, %s) wants:\n", s.Subject, s.Seq, s.Time.Format(time.RFC3339))
		for _, ep := range s.Event.Endpoints {
			if ep.DNSName == ex.Name {
				fmt.Fprintf(w, "    %-6s %s%s\n", ep.RecordType, strings.Join(ep.Targets, " "), ttl(ep.RecordTTL))
			}
		}
	}
	if r := ex.Route; r != nil {
		fmt.Fprintf(w, "  goes to: %s\n", r.Why)
	}
	if len(ex.Observed) == 0 {
		fmt.Fprintf(w, "  held: no provider holds anything at this name or its ownership records\n")
	}
	for _, o := range ex.Observed {
		elsewhere := ""
		if r := ex.Route; r != nil && r.Providers != nil && !slices.Contains(r.Providers, o.Event.Provider) {
			elsewhere = ", not a provider the name goes to"
		}
		fmt.Fprintf(w, "  held by %s in zone %s (seq %d, %s%s):\n", o.Event.Provider, o.Event.Zone, o.Seq, o.Time.Format(time.RFC3339), elsewhere)
		for _, ep := range o.Event.Records {
			fmt.Fprintf(w, "    %s %-6s %s%s\n", ep.DNSName, ep.RecordType, strings.Join(ep.Targets, " "), ttl(ep.RecordTTL))
		}
	}
	if len(ex.History) > 0 {
		fmt.Fprintf(w, "  history (newest first):\n")
	}
	for _, e := range ex.History {
		cause := ""
		if e.Cause != "" {
			cause = "  ← " + e.Cause
		}
		fmt.Fprintf(w, "    %s  %-14s %s%s\n", e.Time.UTC().Format("2006-01-02T15:04:05.000Z"), e.Label(), e.Summary, cause)
	}
}

// owner renders the objects an RRset's records come from, e.g.
// "A www.example.org [eu-west] ← eu/service/shop/web, us/service/shop/web".
func owner(name string, o events.RRsetHolder) string {
	set := ""
	if o.SetIdentifier != "" {
		set = " [" + o.SetIdentifier + "]"
	}
	objs := make([]string, 0, len(o.Objects))
	for _, ref := range o.Objects {
		objs = append(objs, ref.Cluster+"/"+ref.Resource())
	}
	if len(objs) == 0 {
		objs = append(objs, "no object")
	}
	return fmt.Sprintf("%s %s%s ← %s", o.RecordType, name, set, strings.Join(objs, ", "))
}

func ttl(t int64) string {
	if t == 0 {
		return ""
	}
	return fmt.Sprintf("  (ttl %d)", t)
}
