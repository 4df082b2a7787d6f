package domains

import (
	"strings"
	"testing"
)

func TestDomainFilter(t *testing.T) {
	f, err := New(Settings{Include: []string{"example.com", ".sub.example.org"}, Exclude: []string{"private.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"example.com": true, "www.example.com": true, "badexample.com": false,
		"sub.example.org": false, "a.sub.example.org": true,
		"private.example.com": false, "x.private.example.com": false,
		"WWW.Example.COM.": true,
	} {
		if got := f.Match(name); got != want {
			t.Errorf("Match(%q) = %v, want %v", name, got, want)
		}
	}
	if !(Filter{}).Match("anything.example") || !(Filter{}).Empty() {
		t.Error("the zero filter admits every name")
	}
}

func TestRegexDomainFilter(t *testing.T) {
	f, err := New(Settings{Include: []string{"example.com"}, Regex: `(^|\.)example\.org$`, RegexExclusion: `^private\.`})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"www.example.org": true, "example.org": true, "private.example.org": false,
		"www.example.com":  false, // the regex replaces the plain filter
		"WWW.Example.ORG.": true,
	} {
		if got := f.Match(name); got != want {
			t.Errorf("Match(%q) = %v, want %v", name, got, want)
		}
	}
	f, _ = New(Settings{Include: []string{"example.com"}, RegexExclusion: `^skip\.`})
	if !f.Match("www.example.net") || f.Match("skip.example.com") {
		t.Error("an exclusion alone: everything but the exclusion")
	}
	for _, s := range []Settings{{Regex: "("}, {RegexExclusion: "("}} {
		if _, err := New(s); err == nil || !strings.Contains(err.Error(), "--regex-domain-") {
			t.Errorf("%+v: a bad regex must be refused, naming its flag: %v", s, err)
		}
	}
}

// A name left out is left out for a reason naming the flag that did it.
func TestReasonNamesTheFlag(t *testing.T) {
	plain, _ := New(Settings{Include: []string{"example.org"}, Exclude: []string{"internal.example.org"}})
	regex, _ := New(Settings{Regex: `example\.org$`, RegexExclusion: `^skip\.`})
	for _, c := range []struct {
		f          Filter
		name, want string
	}{
		{plain, "www.example.org", ""},
		{plain, "db.internal.example.org", "excluded by --exclude-domains internal.example.org"},
		{plain, "www.example.net", "outside --domain-filter example.org"},
		{regex, "skip.example.org", `excluded by --regex-domain-exclusion ^skip\.`},
		{regex, "www.example.net", `outside --regex-domain-filter example\.org$`},
	} {
		if got := c.f.Reason(c.name); got != c.want {
			t.Errorf("Reason(%q) = %q, want %q", c.name, got, c.want)
		}
		if c.f.Match(c.name) != (c.want == "") {
			t.Errorf("Match(%q) disagrees with Reason %q", c.name, c.want)
		}
	}
}
