package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/stage"
)

// decode turns one msgpack payload on in into JSON on out. It needs no
// schema, so it works as the NATS CLI's --translate for any of our subjects:
//
//	nats sub 'zs.desired.>' --translate 'zonestream decode'
func decode(args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("decode", flag.ContinueOnError)
	stage.Describe(fs, stage.Help{Usage: "zonestream decode < PAYLOAD",
		Summary: "Reads one msgpack payload on stdin and prints it as JSON: the NATS CLI's\n--translate for any subject of zonestream (nats sub 'zs.desired.>' --translate 'zonestream decode')."})
	if err := stage.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return stage.Usagef(fs, "takes no arguments, only a payload on stdin")
	}
	payload, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	js, err := events.ToJSON(payload)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", js)
	return err
}
