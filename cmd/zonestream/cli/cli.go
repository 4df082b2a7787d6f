// Package cli is the zonestream binary's commands: the all-in-one (an
// embedded JetStream and every stage of the pipeline in one process), each
// stage on its own, and the operator tools. The binary
// (cmd/zonestream) runs Main; the tests that run the whole system
// (systemtest/) also call a few of the commands' parts, exported for them.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"

	"github.com/agnivade/levenshtein"

	"github.com/zonestream/zonestream/stage"
)

// Main runs the command args (the binary's arguments, os.Args[1:]) name
// and returns the process' exit code: 0 (also after -h/--help), 1 when the
// command failed, 2 when the command line does not parse (an unknown
// command or flag: one line on stderr, naming the nearest known one).
// What went wrong is printed on stderr.
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
		err = decode(args, os.Stdin, os.Stdout)
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
	case "version":
		err = versionCommand(args)
	case "help":
		// zonestream help [COMMAND]: the help of zonestream, or of COMMAND.
		if len(args) == 0 {
			return Main([]string{"--help"})
		}
		return Main(append(slices.Clone(args), "--help"))
	default:
		def, ok := FindStage(cmd)
		if !ok {
			msg := fmt.Sprintf("zonestream: unknown command %q", cmd)
			if near := nearestCommand(cmd); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			fmt.Fprintln(os.Stderr, msg+" (zonestream --help lists the commands)")
			return 2
		}
		err = stage.MainArgs(def, args)
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if stage.IsUsageError(err) {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "zonestream:", err)
		return 1
	}
	return 0
}

// Commands are the commands of zonestream, for the nearest one to a
// misspelled one and for the tests.
func Commands() []string {
	cmds := []string{"run", "decode", "tail", "explain", "cluster", "plans", "streams", "nats-config", "demo",
		"webhook-server", "healthcheck", "version", "help"}
	for _, d := range Stages() {
		cmds = append(cmds, d.Name)
	}
	return cmds
}

func nearestCommand(name string) string {
	best, bestD := "", 0
	for _, c := range Commands() {
		d := levenshtein.ComputeDistance(name, c)
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD > max(2, len(name)/2) {
		return ""
	}
	return best
}

// versionCommand runs `zonestream version`: the version, as --version
// prints it.
func versionCommand(args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	stage.Describe(fs, stage.Help{Usage: "zonestream version",
		Summary: "Prints the version: the module's (or the one set at link time), the VCS revision and time, the build tags, Go."})
	if err := stage.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return stage.Usagef(fs, "takes no arguments, got %q", fs.Args())
	}
	fmt.Println(stage.Version())
	return nil
}

// commands is the list of commands the help of zonestream prints.
const commands = `Every stage of the pipeline in one process (embedded NATS JetStream unless --nats-url), with the flags below.

Commands:
  collector|dedup|planner|applier|portal [flags]
                                          one stage alone, against --nats-url
  demo [--keep-running]                   local kube-apiserver + BIND + sample Services
                                          (built with -tags demo: ./hack/demo.sh)
  webhook-server --provider=... [flags]   serve a provider over ExternalDNS' webhook protocol
  decode                                  msgpack on stdin -> JSON (nats --translate)
  tail [--new|--last] [--no-follow] SUBJECT
                                          events on SUBJECT as JSON lines
  explain [--json] NAME                   which objects want NAME, who lost, what providers hold, and its history
  cluster retire [--force] NAME           remove a cluster that is gone: its records go, it holds no deletes back
  plans                                   plans queued for the appliers and deletes held by the mass-delete guard, as diffs
  plans approve [--by NAME] ID            let the held deletes ID through (those still current)
  nats-config --cluster NAME... --provider NAME... [--out-dir DIR]
                                          print a nats-server config with a user per identity; write their NKey seeds
  streams ensure                          create or complete the streams, with the operator's credentials
  healthcheck [--url URL]                 exit 0 if a process' /readyz answers 200 (for a container's HEALTHCHECK)
  version                                 the version, VCS revision and build tags
  help [COMMAND]                          this help, or COMMAND's

Run zonestream COMMAND --help for the flags of COMMAND.`
