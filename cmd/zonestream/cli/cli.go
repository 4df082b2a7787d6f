// Package cli is the zonestream binary's commands: the all-in-one (an
// embedded JetStream and every stage of the pipeline in one process), each
// stage on its own, and the operator tools. The binary
// (cmd/zonestream) runs Main; the tests that run the whole system
// (systemtest/) also call a few of the commands' parts, exported for them.
package cli

import (
	"fmt"
	"os"

	"github.com/zonestream/zonestream/stage"
)

// Main runs the command args (the binary's arguments, os.Args[1:]) name
// and returns the process' exit code: 0, 1 when the command failed, 2 when
// no command has that name. What went wrong is printed on stderr.
func Main(args []string) int {
	cmd := ""
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "", "run":
		err = runAll(args)
	case "decode":
		err = decode(os.Stdin, os.Stdout)
	case "tail":
		err = tail(args)
	case "explain":
		err = explain(args)
	case "cluster":
		err = cluster(args)
	case "plans":
		err = plans(args)
	case "streams":
		err = Streams(args)
	case "nats-config":
		err = NatsConfigCommand(args, os.Stdout, os.Stderr)
	case "demo":
		err = demo(args)
	case "webhook-server":
		err = webhookServer(args)
	case "healthcheck":
		err = healthcheck(args)
	case "help":
		fmt.Println(usage)
	default:
		def, ok := FindStage(cmd)
		if !ok {
			fmt.Fprintf(os.Stderr, "zonestream: unknown command %q\n\n%s\n", cmd, usage)
			return 2
		}
		err = stage.MainArgs(def, args)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "zonestream:", err)
		return 1
	}
	return 0
}

const usage = `usage:
  zonestream [flags]                      every stage in one process (embedded NATS unless --nats-url)
  zonestream collector|dedup|planner|applier|portal [flags]
                                          one stage, against --nats-url
  zonestream demo [--keep-running]        local kube-apiserver + BIND + sample Services
                                          (built with -tags demo: ./hack/demo.sh)
  zonestream webhook-server --provider=... [flags]
                                          serve a provider over ExternalDNS' webhook protocol
  zonestream decode                       msgpack on stdin -> JSON (nats --translate)
  zonestream tail [--new|--last] [--no-follow] SUBJECT
                                          events on SUBJECT as JSON lines
  zonestream explain [--json] NAME        which objects want NAME, who lost, what providers hold, and its history
  zonestream cluster retire [--force] NAME
                                          remove a cluster that is gone: its records go, it holds no deletes back
  zonestream plans                        plans queued for the appliers and deletes held by the mass-delete guard, as diffs
  zonestream plans approve [--by NAME] ID let the held deletes ID through (those still current)
  zonestream nats-config --cluster NAME... --provider NAME... [--out-dir DIR]
                                          print a nats-server config with a user per identity; write their NKey seeds
  zonestream streams ensure               create or complete the streams, with the operator's credentials
  zonestream healthcheck [--url URL]      exit 0 if a process' /readyz answers 200 (for a container's HEALTHCHECK)
Run any of them with -h for its flags.`
