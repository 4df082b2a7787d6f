package events

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// maxNesting bounds how deep arrays and maps may nest in a payload. Our
// events nest five levels; the bound keeps a crafted payload from
// exhausting the stack.
const maxNesting = 32

// checkShape walks a msgpack payload before it is decoded and rejects one
// whose arrays or maps claim more elements than the bytes left could hold.
// msgpack preallocates up to a million elements per header, so without
// this a payload of a few hundred bytes could make a reader allocate
// gigabytes: a message on the bus must cost its reader no more than its
// own size.
func checkShape(payload []byte) error {
	r := bytes.NewReader(payload)
	dec := msgpack.NewDecoder(r)
	if err := checkValue(dec, r, 0); err != nil {
		return err
	}
	if r.Len() != 0 {
		return fmt.Errorf("%d bytes after the value", r.Len())
	}
	return nil
}

func checkValue(dec *msgpack.Decoder, r *bytes.Reader, depth int) error {
	c, err := dec.PeekCode()
	if err != nil {
		return err
	}
	var n int
	switch {
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		n, err = dec.DecodeArrayLen()
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		n, err = dec.DecodeMapLen()
		n *= 2
	default:
		return dec.Skip()
	}
	if err != nil {
		return err
	}
	if depth >= maxNesting {
		return fmt.Errorf("nested deeper than %d", maxNesting)
	}
	// Every element takes at least one byte.
	if n > r.Len() {
		return fmt.Errorf("%d elements claimed, %d bytes left", n, r.Len())
	}
	for range n {
		if err := checkValue(dec, r, depth+1); err != nil {
			return err
		}
	}
	return nil
}
