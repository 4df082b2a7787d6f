package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// operatorCommand is the plumbing of the read-only operator commands
// (tail, explain): a --nats-url flag, one positional argument, and a
// JetStream client.
type operatorCommand struct {
	name, usage string
	fs          *flag.FlagSet
	url         *string
}

func newOperatorCommand(name, usage string) *operatorCommand {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	return &operatorCommand{name: name, usage: usage, fs: fs,
		url: fs.String("nats-url", envOr("ZS_NATS_URL", nats.DefaultURL), "NATS server URL")}
}

// parse parses args and returns the one positional argument; ok is false
// when -h was asked for.
func (c *operatorCommand) parse(args []string) (arg string, ok bool, err error) {
	if err := c.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", false, nil
		}
		return "", false, err
	}
	if c.fs.NArg() != 1 {
		return "", false, fmt.Errorf("usage: %s", c.usage)
	}
	return c.fs.Arg(0), true, nil
}

// connect returns a JetStream client; close the connection when done.
func (c *operatorCommand) connect() (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(*c.url, nats.Name("zonestream-"+c.name))
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}
