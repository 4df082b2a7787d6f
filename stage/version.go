package stage

import "runtime/debug"

// version is set at link time by a release build:
//
//	go build -ldflags "-X github.com/zonestream/zonestream/stage.version=v1.2.3" ./cmd/zonestream
//
// Without it, Version reads what the Go toolchain recorded in the binary.
var version string

// Version is the binary's version: the one set at link time, else the
// module's (go install ...@v1.2.3), else the VCS revision it was built
// from, else "devel".
func Version() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if rev != "" {
		return "devel-" + rev + dirty
	}
	return "devel"
}
