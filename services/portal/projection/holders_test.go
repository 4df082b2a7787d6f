package projection

import "testing"

func TestHolders(t *testing.T) {
	a, b := &Observed{Zone: "a"}, &Observed{Zone: "b"}
	var h holders
	h = h.with("bind", a).with("pdns", b)
	if h.get("bind") != a || h.get("pdns") != b || h.get("other") != nil {
		t.Fatalf("got %v", h)
	}
	h = h.with("bind", b)
	if h.get("bind") != b || len(h) != 2 {
		t.Fatalf("replaced: got %v", h)
	}
	h = h.with("bind", nil).with("other", nil)
	if h.get("bind") != nil || h.get("pdns") != b || len(h) != 1 {
		t.Fatalf("removed: got %v", h)
	}
	if h = h.with("pdns", nil); len(h) != 0 {
		t.Fatalf("emptied: got %v", h)
	}
}
