package events

import (
	"bytes"
	"fmt"
	"io"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// What one event may hold: larger than anything real, so that only a
// crafted or broken message reaches them. A reader rejects a message
// beyond them (ErrUndecodable), and a writer refuses to publish one
// (ErrTooLarge, Message), so that whatever is published can be read.
const (
	// MaxEndpoints is the most endpoints of one event (an object's, or
	// the RRsets at one name). Kubernetes' scalability thresholds allow
	// 3,000 pods per namespace: a headless Service wants at most one
	// endpoint per pod.
	MaxEndpoints = 10_000
	// MaxTargets is the most targets of one endpoint: twice the 5,000
	// nodes of Kubernetes' largest cluster, each a target of a NodePort
	// Service or of a node name.
	MaxTargets = 10_000
	// maxExpansion is how many bytes a reader may allocate per byte of
	// payload it decodes (beyond expansionSlack). An element costs what
	// it decodes into, not what it takes on the wire: a nil endpoint is
	// one byte that becomes a 112-byte struct.
	maxExpansion   = 16
	expansionSlack = 64 << 10
)

// maxNesting bounds how deep arrays and maps may nest in a payload. Our
// events nest five levels; the bound keeps a crafted payload from
// exhausting the stack.
const maxNesting = 32

// checkShape walks a msgpack payload before it is decoded into a value
// of type into (nil: into an interface, as ToJSON does) and rejects one
// that would cost its reader more than maxExpansion times its size, or
// that holds more than MaxEndpoints or MaxTargets. msgpack preallocates
// what a header claims, and a one-byte element can decode into a large
// struct, so without this a few bytes could make a reader allocate
// gigabytes: a message on the bus must cost its reader a small constant
// times its own size, in memory and in time.
func checkShape(payload []byte, into reflect.Type) error {
	r := bytes.NewReader(payload)
	w := &shapeWalk{payload: payload, r: r, dec: msgpack.NewDecoder(r),
		budget: maxExpansion*len(payload) + expansionSlack}
	if into != nil && into.Kind() == reflect.Pointer {
		into = into.Elem() // the caller's: allocated already
	}
	if err := w.value(into, 0, nil); err != nil {
		return err
	}
	if r.Len() != 0 {
		return fmt.Errorf("%d bytes after the value", r.Len())
	}
	return nil
}

// limit is the most elements a list may hold, and what they are.
type limit struct {
	most int
	what string
}

// listLimits are the limits of lists by their Go type, fieldLimits of
// lists by the struct field that holds them.
var (
	listLimits  = map[reflect.Type]limit{reflect.TypeFor[[]Endpoint](): {MaxEndpoints, "endpoints"}}
	fieldLimits = map[reflect.Type]map[string]limit{reflect.TypeFor[Endpoint](): {"targets": {MaxTargets, "targets of one endpoint"}}}
)

// Sizes of what decoding into an interface allocates per element.
const (
	anySize    = 16 // an interface value
	mapEntries = 3  // a Go map takes about three times its keys' and values' size
)

// shapeWalk reads a payload as msgpack would decode it, counting what
// decoding would allocate.
type shapeWalk struct {
	payload []byte
	r       *bytes.Reader
	dec     *msgpack.Decoder
	spent   int
	budget  int
}

func (w *shapeWalk) spend(n int) error {
	w.spent += n
	if w.spent > w.budget {
		return fmt.Errorf("would take over %d bytes to decode %d (at most %d times its size)", w.budget, len(w.payload), maxExpansion)
	}
	return nil
}

// value walks one value decoded into t (nil: an interface), a list
// within lim when lim is not nil.
func (w *shapeWalk) value(t reflect.Type, depth int, lim *limit) error {
	c, err := w.dec.PeekCode()
	if err != nil {
		return err
	}
	if t != nil && t.Kind() == reflect.Interface {
		t = nil
	}
	if c == msgpcode.Nil {
		// A zero value: nothing allocated, but for the JSON it becomes.
		if err := w.dec.Skip(); err != nil {
			return err
		}
		return w.spend(boxed(t))
	}
	for t != nil && t.Kind() == reflect.Pointer {
		if err := w.spend(int(t.Elem().Size())); err != nil {
			return err
		}
		t = t.Elem()
	}
	switch {
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		n, err := w.dec.DecodeArrayLen()
		if err != nil {
			return err
		}
		if err := w.elements(n, depth); err != nil {
			return err
		}
		return w.array(t, n, depth, lim)
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		n, err := w.dec.DecodeMapLen()
		if err != nil {
			return err
		}
		if err := w.elements(2*n, depth); err != nil {
			return err
		}
		return w.dict(t, n, depth)
	case msgpcode.IsString(c) || msgpcode.IsBin(c):
		n, err := w.dec.DecodeBytesLen()
		if err != nil {
			return err
		}
		if n > w.r.Len() {
			return fmt.Errorf("%d bytes claimed, %d left", n, w.r.Len())
		}
		if _, err := w.r.Seek(int64(n), io.SeekCurrent); err != nil {
			return err
		}
		// Read, then copied into a string; into an interface, boxed too.
		return w.spend(2*n + boxed(t))
	}
	if msgpcode.IsExt(c) {
		// Skip would read the claimed length in chunks of up to 1 MiB
		// before finding the payload short: check the length first.
		_, n, err := w.dec.DecodeExtHeader()
		if err != nil {
			return err
		}
		if n > w.r.Len() {
			return fmt.Errorf("extension of %d bytes claimed, %d left", n, w.r.Len())
		}
		if _, err := w.r.Seek(int64(n), io.SeekCurrent); err != nil {
			return err
		}
		return w.spend(2*n + boxed(t))
	}
	if err := w.dec.Skip(); err != nil {
		return err
	}
	return w.spend(boxed(t))
}

// boxed is what an interface (t nil) adds to a value: its box, or the
// JSON ToJSON writes for it.
func boxed(t reflect.Type) int {
	if t == nil {
		return anySize
	}
	return 0
}

// elements checks a list's or map's header: every element takes at least
// one byte, and nesting is bounded.
func (w *shapeWalk) elements(n, depth int) error {
	if depth >= maxNesting {
		return fmt.Errorf("nested deeper than %d", maxNesting)
	}
	if n > w.r.Len() {
		return fmt.Errorf("%d elements claimed, %d bytes left", n, w.r.Len())
	}
	return nil
}

// array walks n elements decoded into t: a slice's elements, a struct's
// fields in order (msgpack's array form of a struct), or interfaces.
func (w *shapeWalk) array(t reflect.Type, n, depth int, lim *limit) error {
	if t != nil && t.Kind() == reflect.Struct {
		fields := fieldsOf(t)
		for i := range n {
			var ft reflect.Type
			var fl *limit
			if i < len(fields.list) {
				ft, fl = fields.list[i].typ, fields.list[i].lim
			}
			if err := w.value(ft, depth+1, fl); err != nil {
				return err
			}
		}
		return nil
	}
	if l, ok := listLimits[t]; ok {
		lim = &l
	}
	if lim != nil && n > lim.most {
		return fmt.Errorf("%d %s, at most %d", n, lim.what, lim.most)
	}
	var elem reflect.Type
	size := anySize
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
		size = int(elem.Size())
	}
	// msgpack makes the slice, then appends it to the empty one: twice.
	if err := w.spend(2*n*size + boxed(t)); err != nil {
		return err
	}
	for range n {
		if err := w.value(elem, depth+1, nil); err != nil {
			return err
		}
	}
	return nil
}

// dict walks n key-value pairs decoded into t: a struct's fields by name
// (unknown ones are skipped, as msgpack does), a map's entries, or an
// interface's map.
func (w *shapeWalk) dict(t reflect.Type, n, depth int) error {
	if t != nil && t.Kind() == reflect.Struct {
		fields := fieldsOf(t)
		for range n {
			f, err := w.fieldName(fields, depth)
			if err != nil {
				return err
			}
			var ft reflect.Type
			var fl *limit
			if f != nil {
				ft, fl = f.typ, f.lim
			}
			if err := w.value(ft, depth+1, fl); err != nil {
				return err
			}
		}
		return nil
	}
	var key, val reflect.Type
	entry := 2 * anySize
	if t != nil && t.Kind() == reflect.Map {
		key, val = t.Key(), t.Elem()
		entry = int(key.Size() + val.Size())
	}
	if err := w.spend(n*entry*mapEntries + boxed(t)); err != nil {
		return err
	}
	for range n {
		if err := w.value(key, depth+1, nil); err != nil {
			return err
		}
		if err := w.value(val, depth+1, nil); err != nil {
			return err
		}
	}
	return nil
}

// fieldName reads a struct's key in place (msgpack reads it without
// keeping it) and returns its field, nil when the struct has none.
func (w *shapeWalk) fieldName(fields *structShape, depth int) (*field, error) {
	c, err := w.dec.PeekCode()
	if err != nil {
		return nil, err
	}
	if !msgpcode.IsString(c) {
		return nil, w.value(nil, depth+1, nil) // msgpack rejects it
	}
	n, err := w.dec.DecodeBytesLen()
	if err != nil {
		return nil, err
	}
	if n > w.r.Len() {
		return nil, fmt.Errorf("%d bytes claimed, %d left", n, w.r.Len())
	}
	at := len(w.payload) - w.r.Len()
	if _, err := w.r.Seek(int64(n), io.SeekCurrent); err != nil {
		return nil, err
	}
	return fields.byName[string(w.payload[at:at+n])], nil
}
