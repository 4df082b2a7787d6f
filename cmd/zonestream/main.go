// Command zonestream is the all-in-one: an embedded JetStream and every
// stage of the pipeline in one process, each stage on its own, and the
// operator tools.
//
//	zonestream [flags]              all stages, embedded NATS unless --nats-url
//	zonestream collector|dedup|planner|applier|portal [flags]
//	zonestream demo                 a local kube-apiserver and BIND, sample Services (-tags demo)
//	zonestream webhook-server       a provider over ExternalDNS' webhook protocol
//	zonestream decode               one msgpack payload on stdin -> JSON
//	zonestream tail SUBJECT         events as JSON lines
//	zonestream explain NAME         who wants a DNS name, and what holds it
//	zonestream cluster retire NAME  remove a cluster that is gone from the bus
//	zonestream plans [approve ID]   plans queued and deletes held, with their changes; approve held deletes
//	zonestream nats-config          the NATS server's users and permissions, and their keys
//	zonestream streams ensure       create the streams (operator credentials)
//	zonestream healthcheck          exit 0 if a process' /readyz answers 200 (container HEALTHCHECK)
//	zonestream version              the version, VCS revision and build tags (also --version)
//	zonestream help [COMMAND]       the help (also --help, -h, after any command)
//
// A flag or command that does not exist exits 2 with one line naming the
// nearest; see docs/reference/cli.md.
package main

import (
	"os"

	"github.com/zonestream/zonestream/cmd/zonestream/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
