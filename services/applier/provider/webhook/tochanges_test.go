package webhook_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/webhook"
)

// pairByScan is the pairing rule of ToChanges spelled out the slow way:
// an updateNew takes the updateOld at its own index when that one is
// unused and of the same RRset, else the first unused updateOld of its
// RRset. ToChanges must map every input exactly as this does.
func pairByScan(ch webhook.Changes) ([]events.Change, error) {
	if len(ch.UpdateOld) != len(ch.UpdateNew) {
		return nil, fmt.Errorf("%d updateOld but %d updateNew endpoints", len(ch.UpdateOld), len(ch.UpdateNew))
	}
	var out []events.Change
	for i := range ch.Delete {
		out = append(out, events.Change{Old: &ch.Delete[i]})
	}
	used := make([]bool, len(ch.UpdateOld))
	for i := range ch.UpdateNew {
		k, j := provider.KeyOf(ch.UpdateNew[i]), -1
		if !used[i] && provider.KeyOf(ch.UpdateOld[i]) == k {
			j = i
		} else {
			for o := range ch.UpdateOld {
				if !used[o] && provider.KeyOf(ch.UpdateOld[o]) == k {
					j = o
					break
				}
			}
		}
		if j < 0 {
			return nil, fmt.Errorf("updateNew %s %s has no updateOld", ch.UpdateNew[i].DNSName, ch.UpdateNew[i].RecordType)
		}
		used[j] = true
		out = append(out, events.Change{Old: &ch.UpdateOld[j], New: &ch.UpdateNew[i]})
	}
	for i := range ch.Create {
		out = append(out, events.Change{New: &ch.Create[i]})
	}
	return out, nil
}

// randomChanges draws updates over few names and types, so that RRsets
// repeat, pairs are out of order, and some updateNew has no updateOld.
func randomChanges(r *rand.Rand) webhook.Changes {
	ep := func(i int) events.Endpoint {
		name := fmt.Sprintf("n%d.example.org", r.IntN(4))
		if r.IntN(4) == 0 {
			name = "N" + name[1:] + "." // the same RRset, spelled otherwise
		}
		return events.Endpoint{DNSName: name, RecordType: []string{"A", "aaaa", "TXT"}[r.IntN(3)],
			SetIdentifier: []string{"", "eu"}[r.IntN(2)], Targets: []string{fmt.Sprint(i)}}
	}
	var ch webhook.Changes
	n := r.IntN(12)
	for i := range n {
		ch.UpdateOld = append(ch.UpdateOld, ep(i))
	}
	// Mostly a shuffle of the olds' RRsets (a valid pairing), sometimes not.
	for _, i := range r.Perm(n) {
		e := ch.UpdateOld[i]
		if r.IntN(10) == 0 {
			e = ep(100 + i)
		}
		e.Targets = []string{fmt.Sprint("new", i)}
		ch.UpdateNew = append(ch.UpdateNew, e)
	}
	for i := range r.IntN(3) {
		ch.Create = append(ch.Create, ep(200+i))
		ch.Delete = append(ch.Delete, ep(300+i))
	}
	if r.IntN(20) == 0 && n > 0 {
		ch.UpdateNew = ch.UpdateNew[1:]
	}
	return ch
}

// TestToChangesPairsAsTheScanDoes: the linear pairing maps every input,
// errors included, exactly as the scan for the first unused updateOld.
func TestToChangesPairsAsTheScanDoes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 20000 {
		ch := randomChanges(r)
		want, wantErr := pairByScan(ch)
		got, err := webhook.ToChanges(ch)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("round %d: error %v, want %v\n%+v", round, err, wantErr, ch)
		}
		if err != nil {
			continue
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d changes, want %d", round, len(got), len(want))
		}
		for i := range want {
			// Pointers into ch: the same endpoint, not merely an equal one.
			if got[i].Old != want[i].Old || got[i].New != want[i].New {
				t.Fatalf("round %d: change %d is %v, want %v\n%+v", round, i, got[i], want[i], ch)
			}
		}
	}
}

// BenchmarkToChanges: 20,000 update pairs whose updateNew come in the
// reverse order of their updateOld, so that no pair shares an index.
func BenchmarkToChanges(b *testing.B) {
	const pairs = 20000
	var ch webhook.Changes
	for i := range pairs {
		ch.UpdateOld = append(ch.UpdateOld, events.NewEndpoint(fmt.Sprintf("n%d.example.org", i), "A", 300, "192.0.2.1"))
	}
	for i := pairs - 1; i >= 0; i-- {
		ch.UpdateNew = append(ch.UpdateNew, events.NewEndpoint(fmt.Sprintf("n%d.example.org", i), "A", 300, "192.0.2.2"))
	}
	for b.Loop() {
		if _, err := webhook.ToChanges(ch); err != nil {
			b.Fatal(err)
		}
	}
}
