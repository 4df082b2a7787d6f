package empty_test

import (
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
	"github.com/zonestream/zonestream/services/collector/collectortest"
)

// A collector running only the empty source gets ready, says it has
// synced (so that dedup may act on this cluster), and publishes nothing
// of its own; a state published under the source's name before (only a
// hand-made one can be) is taken back on the first pass, as ExternalDNS'
// empty source wants nothing.
func TestEmptySourceRunsAndPublishesNothing(t *testing.T) {
	ns := collectortest.NewNamespace(t)
	stale := events.SourceSubject(ns, "empty", ns, "stale")
	ref := events.ObjectRef{Cluster: ns, Source: "empty", Namespace: ns, Name: "stale"}
	if ref.Subject() != stale {
		t.Fatalf("subject %s, want %s", ref.Subject(), stale)
	}
	if _, _, err := events.Publish(t.Context(), collectortest.JS, stale,
		&events.SourceState{Object: ref, Endpoints: []events.Endpoint{collectortest.EP("stale.example.org", "A", "192.0.2.1")}}, ""); err != nil {
		t.Fatal(err)
	}

	collectortest.StartCollector(t, collector.Config{ClusterName: ns, Namespace: ns, Sources: []string{"empty"}})
	collectortest.WaitState(t, stale, nil)

	mark := events.CollectorSubject(ns, events.CollectorID([]string{"empty"}, ns))
	st, err := collectortest.JS.Stream(t.Context(), events.StreamSources)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(collectortest.WaitFor)
	for {
		m, err := st.GetLastMsgForSubject(t.Context(), mark)
		if err == nil {
			var cs events.CollectorState
			if err := events.Decode(events.Received{Subject: m.Subject, Header: m.Header, Data: m.Data}, &cs); err != nil {
				t.Fatal(err)
			}
			if cs.Phase == events.PhaseSynced {
				if len(cs.Sources) != 1 || cs.Sources[0] != "empty" {
					t.Fatalf("synced mark of sources %v", cs.Sources)
				}
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no synced mark")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for subj := range collectortest.SubjectCounts(t, events.SourceFilter(ns)) {
		if subj != stale && !events.IsMarker(subj) {
			t.Errorf("published on %s", subj)
		}
	}
}
