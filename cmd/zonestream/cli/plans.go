package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
)

// plans runs `zonestream plans`: the plans queued for the appliers and the
// deletes the planner's mass-delete guard holds, each with its changes;
// `zonestream plans approve ID` lets held deletes through.
func plans(args []string) error {
	if len(args) > 0 && args[0] == "approve" {
		return approve(args[1:])
	}
	cmd := newOperatorCommand("plans", "zonestream plans [approve ID]")
	cmd.nargs = 0
	if _, ok, err := cmd.parse(args); !ok {
		return err
	}
	return cmd.do(time.Minute, func(ctx context.Context, js jetstream.JetStream) error {
		return listPlans(ctx, js, os.Stdout)
	})
}

func approve(args []string) error {
	cmd := newOperatorCommand("plans approve", "zonestream plans approve [--by NAME] ID")
	by := cmd.fs.String("by", operatorName(), "who approves, for the record")
	id, ok, err := cmd.parse(args)
	if !ok {
		return err
	}
	return cmd.do(time.Minute, func(ctx context.Context, js jetstream.JetStream) error {
		h, err := approveHeld(ctx, js, id, *by)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stdout, "approved %s as %s: %d deletes in zone %s of %s; the planner lets through those still current\n",
			h.ID, *by, h.Deletes, h.Zone, h.Provider)
		return nil
	})
}

// operatorName is user@host, as far as they are known.
func operatorName() string {
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if host, err := os.Hostname(); err == nil {
		name += "@" + host
	}
	return name
}

// maxListedPlans bounds how many queued plans `zonestream plans` reads.
const maxListedPlans = 10000

// listPlans prints the held deletes, then the plans queued for the
// appliers, each with its changes as a diff.
func listPlans(ctx context.Context, js jetstream.JetStream, out io.Writer) error {
	held, err := ReadHeld(ctx, js)
	if err != nil {
		return err
	}
	for _, h := range held {
		fmt.Fprintf(out, "held %s  %s %s: %s; approve: zonestream plans approve %s\n", h.ID, h.Provider, h.Zone, h.Summary(), h.ID)
		writeDiff(out, h.Changes)
		if h.ChangesOmitted > 0 {
			fmt.Fprintf(out, "  (and %d more changes)\n", h.ChangesOmitted)
		}
	}
	st, err := js.Stream(ctx, events.StreamPlans)
	if err != nil {
		return err
	}
	info, err := st.Info(ctx)
	if err != nil {
		return err
	}
	listed := 0
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq && listed < maxListedPlans; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // taken by an applier, or withdrawn
		}
		if err != nil {
			return err
		}
		listed++
		var p events.Plan
		if err := events.Decode(events.Received{Subject: m.Subject, Header: m.Header, Data: m.Data}, &p); err != nil {
			fmt.Fprintf(out, "pending seq %d %s: unreadable: %v\n", seq, m.Subject, err)
			continue
		}
		kind := "pending"
		if p.DryRun {
			kind = "dry run" // never applied (--dry-run)
		}
		fmt.Fprintf(out, "%s %s  %s %s: %d changes\n", kind, p.ID, p.Provider, p.Zone, len(p.Changes))
		writeDiff(out, p.Changes)
	}
	if len(held) == 0 && listed == 0 {
		fmt.Fprintln(out, "no plan pending, no delete held")
	}
	return nil
}

// writeDiff prints changes as a diff: "-" what goes, "+" what comes.
func writeDiff(out io.Writer, changes []events.Change) {
	line := func(sign string, ep *events.Endpoint) {
		fmt.Fprintf(out, "  %s %s %s %s\n", sign, ep.DNSName, ep.RecordType, strings.Join(ep.Targets, " "))
	}
	for _, c := range changes {
		if c.Old != nil {
			line("-", c.Old)
		}
		if c.New != nil {
			line("+", c.New)
		}
	}
}

// ReadHeld reads every zone's held deletes, by provider and zone.
func ReadHeld(ctx context.Context, js jetstream.JetStream) ([]events.HeldDeletes, error) {
	var (
		mu   sync.Mutex
		done bool
		held []events.HeldDeletes
	)
	err := events.ReadLast(ctx, js, events.StreamHeld, []string{events.SubjectHeld + ".>"}, func(m events.Received) {
		mu.Lock()
		defer mu.Unlock()
		var h events.HeldDeletes
		if done || events.Decode(m, &h) != nil || h.IsTombstone() {
			return
		}
		held = append(held, h)
	})
	mu.Lock()
	defer mu.Unlock()
	done = true
	slices.SortFunc(held, func(a, b events.HeldDeletes) int {
		return strings.Compare(a.Provider+" "+a.Zone, b.Provider+" "+b.Zone)
	})
	return held, err
}

// approveHeld publishes an approval of the held deletes id, in the name
// of by. It refuses an id no zone holds now.
func approveHeld(ctx context.Context, js jetstream.JetStream, id, by string) (events.HeldDeletes, error) {
	held, err := ReadHeld(ctx, js)
	if err != nil {
		return events.HeldDeletes{}, err
	}
	i := slices.IndexFunc(held, func(h events.HeldDeletes) bool { return h.ID == id })
	if i < 0 {
		return events.HeldDeletes{}, fmt.Errorf("no zone holds deletes %s now (`zonestream plans` lists them)", id)
	}
	h := held[i]
	a := &events.Approval{Provider: h.Provider, Zone: h.Zone, HeldID: h.ID, By: by}
	if _, _, err := events.Publish(ctx, js, events.ApprovalSubject(h.Provider, h.Zone), a, ""); err != nil {
		return events.HeldDeletes{}, err
	}
	return h, nil
}
