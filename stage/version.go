package stage

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// version is set at link time by a release build:
//
//	go build -ldflags "-X github.com/zonestream/zonestream/stage.version=v1.2.3" ./cmd/zonestream
//
// Without it, Version reads what the Go toolchain recorded in the binary.
var version string

// Version is the binary's version, on one line: the one set at link time,
// else the module's (go install ...@v1.2.3, "(devel)" from a checkout),
// then the VCS revision and time it was built from (a build with
// -buildvcs=false records none), its build tags and Go:
//
//	zonestream v1.2.3 (revision 0a1b2c3d4e5f 2026-11-30T10:00:00Z, modified; tags externaldns; go1.26.1 linux/amd64)
func Version() string {
	v, rev, at, modified, tags := version, "", "", false, ""
	info, ok := debug.ReadBuildInfo()
	if ok {
		if v == "" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			case "-tags":
				tags = s.Value
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	var parts []string
	switch {
	case rev != "":
		r := "revision " + rev
		if at != "" {
			r += " " + at
		}
		if modified {
			r += ", modified"
		}
		parts = append(parts, r)
	case ok:
		parts = append(parts, "revision unknown (built with -buildvcs=false)")
	}
	if tags == "" {
		tags = "none"
	}
	parts = append(parts, "tags "+tags, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
	return "zonestream " + v + " (" + strings.Join(parts, "; ") + ")"
}
