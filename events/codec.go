package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"github.com/vmihailenco/msgpack/v5"
)

// Headers every zonestream message carries, so that the NATS CLI shows what
// a message is, and a chain of events can be followed back to its cause.
const (
	HeaderContentType = "Content-Type"
	HeaderSchema      = "Zs-Schema"
	HeaderHash        = "Zs-Hash"
	HeaderEventID     = "Zs-Event-Id"
	HeaderCausation   = "Zs-Causation-Id"
	// HeaderError and HeaderOriginalSubject go on dead letters.
	HeaderError           = "Zs-Error"
	HeaderOriginalSubject = "Zs-Original-Subject"
)

// ContentType is the media type of every payload.
const ContentType = "application/msgpack"

// Marshal canonicalizes ev and encodes it. The content hash is taken of the
// returned bytes, so equal content always has an equal hash.
func Marshal(ev Event) ([]byte, error) {
	buf, err := encode(ev)
	if err != nil {
		return nil, err
	}
	defer release(buf)
	return bytes.Clone(buf.Bytes()), nil
}

// Hash is the content hash of an encoded payload, as carried in HeaderHash.
func Hash(payload []byte) string { return strconv.FormatUint(xxhash.Sum64(payload), 16) }

// HashOf canonicalizes and hashes an event.
func HashOf(ev Event) (string, error) {
	if enc, ok := ev.(*Encoded); ok {
		return enc.hash, nil
	}
	buf, err := encode(ev)
	if err != nil {
		return "", err
	}
	defer release(buf)
	return Hash(buf.Bytes()), nil
}

// Size is the length of ev's payload, canonicalized and encoded.
func Size(ev Event) (int, error) {
	buf, err := encode(ev)
	if err != nil {
		return 0, err
	}
	defer release(buf)
	return buf.Len(), nil
}

// buffers are the encoding buffers, kept between encodings: a buffer
// grown for a plan of 1000 changes serves the next one without growing
// through every size again.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxKept is the largest buffer put back into buffers.
const maxKept = 1 << 20

// encode canonicalizes ev and encodes it into a buffer of buffers, to be
// released once its bytes are no longer used.
func encode(ev Event) (*bytes.Buffer, error) {
	ev.canonicalize()
	buf := buffers.Get().(*bytes.Buffer)
	buf.Reset()
	enc := msgpack.GetEncoder() // an encoder is larger than most payloads
	defer msgpack.PutEncoder(enc)
	enc.Reset(buf)
	enc.SetSortMapKeys(true)
	enc.SetOmitEmpty(true)
	if err := enc.Encode(ev); err != nil {
		release(buf)
		return nil, fmt.Errorf("encode %s: %w", ev.Schema(), err)
	}
	return buf, nil
}

func release(buf *bytes.Buffer) {
	if buf.Cap() <= maxKept {
		buffers.Put(buf)
	}
}

// Encoded is an event encoded once, with the hash of its payload. It is an
// Event itself: a stage that encoded an event to learn whether its content
// changed publishes these same bytes (Publish, Message, LastAck.Publish)
// rather than encoding it a second time. The event must not change after
// Encode.
type Encoded struct {
	ev      Event
	payload []byte
	hash    string
}

// Encode canonicalizes and encodes ev (an Encoded is returned as it is).
func Encode(ev Event) (*Encoded, error) {
	if enc, ok := ev.(*Encoded); ok {
		return enc, nil
	}
	payload, err := Marshal(ev)
	if err != nil {
		return nil, err
	}
	return &Encoded{ev: ev, payload: payload, hash: Hash(payload)}, nil
}

// Hash is the content hash of the payload, as carried in HeaderHash.
func (e *Encoded) Hash() string { return e.hash }

func (e *Encoded) Schema() Schema  { return e.ev.Schema() }
func (e *Encoded) canonicalize()   {} // Encode did
func (e *Encoded) subject() string { return e.ev.subject() }

// IsTombstone is the event's: an Encoded tombstone expires as the event would.
func (e *Encoded) IsTombstone() bool {
	t, ok := e.ev.(Tombstoner)
	return ok && t.IsTombstone()
}

// TombstoneTTL is how long the tombstone of a key's state (an object, a
// name, what a provider holds) stays on its stream before it expires and
// leaves its subject empty. Every reader that restarts or reads back takes
// an empty subject exactly as a tombstone, so a tombstone is only news for
// the watches that follow the stream live, and a watch that may have
// missed news starts over (CutOffAfter, cutoff.go). Long enough that a
// reader a NATS restart or a network blip kept away is back well before
// its tombstones expire; short enough that what a restart reads, on the
// server and in every stage, is what exists plus the last minutes of
// deletes, not a day of them (which made a NATS restart late in a long
// run take 20 s, where it took 4 s early on).
// $ZS_TOMBSTONE_TTL shortens it for a test that must see tombstones expire
// within its run (the chaos command); a process and its readers must agree
// on it.
var TombstoneTTL = durationFromEnv("ZS_TOMBSTONE_TTL", 15*time.Minute)

func durationFromEnv(key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(key)); err == nil && d > 0 {
		return d
	}
	return def
}

// MarkTombstoneTTL is how long the tombstone of a completeness mark (a
// retired collector), a cluster claim (released) or held deletes
// (released) stays: a day. These are few, and a restarted dedup reads the
// marks back to know which collectors left by retirement: a retirement
// must outlive any outage of dedup an operator would sit through.
const MarkTombstoneTTL = 24 * time.Hour

// tombstoneTTL is how long ev stays on its stream when it is a tombstone.
func tombstoneTTL(ev Event) time.Duration {
	if enc, ok := ev.(*Encoded); ok {
		ev = enc.ev
	}
	switch ev.(type) {
	case *CollectorState, *ClusterClaim, *HeldDeletes:
		return MarkTombstoneTTL
	}
	return TombstoneTTL
}

// Message builds the NATS message for ev: payload and headers. A tombstone
// expires (tombstoneTTL); it replaces its subject's last state by the
// state streams' limit of one message per subject, never by a rollup
// (streams.go).
func Message(subject string, ev Event, causation string) (*nats.Msg, error) {
	enc, err := Encode(ev)
	if err != nil {
		return nil, err
	}
	payload := enc.payload
	// What a reader would reject is not published.
	if err := checkShape(payload, reflect.TypeOf(enc.ev)); err != nil {
		return nil, fmt.Errorf("%s on %s: %w: %w", ev.Schema(), subject, ErrTooLarge, err)
	}
	msg := nats.NewMsg(subject)
	if t, ok := ev.(Tombstoner); ok && t.IsTombstone() {
		msg.Header.Set(jetstream.MsgTTLHeader, tombstoneTTL(ev).String())
	}
	msg.Data = payload
	id := nuid.Next()
	msg.Header.Set(HeaderContentType, ContentType)
	msg.Header.Set(HeaderSchema, ev.Schema().String())
	msg.Header.Set(HeaderHash, enc.hash)
	msg.Header.Set(HeaderEventID, id)
	msg.Header.Set(nats.MsgIdHdr, id)
	if causation != "" {
		msg.Header.Set(HeaderCausation, causation)
	}
	return msg, nil
}

// Unmarshal decodes a payload into ev, checking the schema header when there
// is one, so a message on the wrong subject is an error, not garbage state.
// Readers of the bus use Decode, which also checks the subject.
func Unmarshal(header nats.Header, data []byte, ev Event) error {
	if s := header.Get(HeaderSchema); s != "" && s != ev.Schema().String() {
		return fmt.Errorf("%w: schema %q, want %q", ErrUndecodable, s, ev.Schema())
	}
	if err := checkShape(data, reflect.TypeOf(ev)); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUndecodable, ev.Schema(), err)
	}
	if err := msgpack.Unmarshal(data, ev); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUndecodable, ev.Schema(), err)
	}
	return nil
}

// Decode decodes a received message into ev and checks that ev belongs on
// the subject it came on: identity is the subject's, and a payload that
// claims another object, name, provider or zone is rejected, never
// believed (ErrWrongSubject).
func Decode(r Received, ev Event) error {
	if err := Unmarshal(r.Header, r.Data, ev); err != nil {
		return err
	}
	if want := ev.subject(); want != r.Subject {
		return fmt.Errorf("%w: %s payload on %s belongs on %s", ErrWrongSubject, ev.Schema(), r.Subject, want)
	}
	return nil
}

// ToJSON turns any msgpack payload into JSON without knowing its schema:
// the operator's view of a message (`zonestream decode`, `nats --translate`).
func ToJSON(payload []byte) ([]byte, error) {
	if err := checkShape(payload, nil); err != nil {
		return nil, fmt.Errorf("not a msgpack payload: %w", err)
	}
	var v any
	dec := msgpack.NewDecoder(bytes.NewReader(payload))
	dec.SetMapDecoder(func(d *msgpack.Decoder) (any, error) { return d.DecodeMap() })
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not a msgpack payload: %w", err)
	}
	return json.Marshal(jsonSafe(v))
}

// jsonSafe converts msgpack's map[any]any into map[string]any.
func jsonSafe(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = jsonSafe(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = jsonSafe(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = jsonSafe(e)
		}
		return t
	case []byte:
		return string(t)
	}
	return v
}
