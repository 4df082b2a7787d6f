package cli

import (
	"fmt"
	"io"

	"github.com/zonestream/zonestream/events"
)

// decode turns one msgpack payload on in into JSON on out. It needs no
// schema, so it works as the NATS CLI's --translate for any of our subjects:
//
//	nats sub 'zs.desired.>' --translate 'zonestream decode'
func decode(in io.Reader, out io.Writer) error {
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
