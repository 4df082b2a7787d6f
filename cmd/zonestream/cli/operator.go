package cli

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/stage"
)

// operatorCommand is the plumbing of the operator commands (tail, explain,
// cluster retire, plans, streams ensure): --nats-url and the NATS credential
// flags, one positional argument, and a JetStream client.
type operatorCommand struct {
	name, usage string
	fs          *flag.FlagSet
	url         *string
	creds       stage.Credentials
	// nargs is how many positional arguments the command takes.
	nargs int
}

func newOperatorCommand(name, usage string) *operatorCommand {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	c := &operatorCommand{name: name, usage: usage, fs: fs, nargs: 1,
		url: fs.String("nats-url", envOr("ZS_NATS_URL", nats.DefaultURL), "NATS server URL")}
	c.creds.RegisterFlags(fs)
	stage.Describe(fs, stage.Help{Usage: usage})
	return c
}

// parse parses args (flags also from $EXTERNAL_DNS_<FLAG>) and returns the
// positional argument, if the command takes one; ok is false when -h was
// asked for.
func (c *operatorCommand) parse(args []string) (arg string, ok bool, err error) {
	if err := stage.Parse(c.fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", false, nil
		}
		return "", false, err
	}
	if c.fs.NArg() != c.nargs {
		return "", false, stage.Usagef(c.fs, "usage: %s", c.usage)
	}
	return c.fs.Arg(0), true, nil
}

// connect returns a JetStream client; close the connection when done.
// What the server refuses these credentials is logged to stderr.
func (c *operatorCommand) connect() (*nats.Conn, jetstream.JetStream, error) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("command", c.name)
	nc, err := stage.Dial(*c.url, "zonestream-"+c.name, c.creds, logger)
	if err != nil {
		return nil, nil, err
	}
	js, err := c.creds.JetStream(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, js, nil
}

// do connects, runs fn with at most timeout, and closes the connection.
func (c *operatorCommand) do(timeout time.Duration, fn func(context.Context, jetstream.JetStream) error) error {
	nc, js, err := c.connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return fn(ctx, js)
}
