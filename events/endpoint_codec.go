package events

import (
	"fmt"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// Endpoints are most of what the bus carries: every state and change is a
// list of them. Encoding and decoding them by reflection cost an
// allocation per struct (msgpack's list of the fields not omitted) and a
// lookup per field; these two methods write and read the very same bytes
// as msgpack's struct encoding with Marshal's options (a map of the
// fields not empty, in declaration order), field by field. The test of
// this file holds them to that.

// The field names on the wire, as the struct tags say.
const (
	fieldDNSName          = "dnsName"
	fieldRecordType       = "recordType"
	fieldTargets          = "targets"
	fieldSetIdentifier    = "setIdentifier"
	fieldRecordTTL        = "recordTTL"
	fieldLabels           = "labels"
	fieldProviderSpecific = "providerSpecific"
)

// EncodeMsgpack implements msgpack.CustomEncoder.
func (e Endpoint) EncodeMsgpack(enc *msgpack.Encoder) error {
	n := 0
	for _, present := range []bool{e.DNSName != "", e.RecordType != "", len(e.Targets) > 0,
		e.SetIdentifier != "", e.RecordTTL != 0, len(e.Labels) > 0, len(e.ProviderSpecific) > 0} {
		if present {
			n++
		}
	}
	if err := enc.EncodeMapLen(n); err != nil {
		return err
	}
	if err := encodeStringField(enc, fieldDNSName, e.DNSName); err != nil {
		return err
	}
	if err := encodeStringField(enc, fieldRecordType, e.RecordType); err != nil {
		return err
	}
	if len(e.Targets) > 0 {
		if err := enc.EncodeString(fieldTargets); err != nil {
			return err
		}
		if err := enc.EncodeArrayLen(len(e.Targets)); err != nil {
			return err
		}
		for _, t := range e.Targets {
			if err := enc.EncodeString(t); err != nil {
				return err
			}
		}
	}
	if err := encodeStringField(enc, fieldSetIdentifier, e.SetIdentifier); err != nil {
		return err
	}
	if e.RecordTTL != 0 {
		// msgpack keeps an int64 field's type: 9 bytes whatever its value.
		if err := enc.EncodeString(fieldRecordTTL); err != nil {
			return err
		}
		if err := enc.EncodeInt64(e.RecordTTL); err != nil {
			return err
		}
	}
	// Rare: by reflection, with the encoder's options (sorted map keys).
	if len(e.Labels) > 0 {
		if err := enc.EncodeString(fieldLabels); err != nil {
			return err
		}
		if err := enc.Encode(e.Labels); err != nil {
			return err
		}
	}
	if len(e.ProviderSpecific) > 0 {
		if err := enc.EncodeString(fieldProviderSpecific); err != nil {
			return err
		}
		if err := enc.Encode(e.ProviderSpecific); err != nil {
			return err
		}
	}
	return nil
}

func encodeStringField(enc *msgpack.Encoder, name, value string) error {
	if value == "" {
		return nil
	}
	if err := enc.EncodeString(name); err != nil {
		return err
	}
	return enc.EncodeString(value)
}

// DecodeMsgpack implements msgpack.CustomDecoder: a map of fields, those
// it does not know skipped, as msgpack's struct decoding does.
func (e *Endpoint) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeMapLen()
	if err != nil {
		return fmt.Errorf("endpoint: %w", err)
	}
	*e = Endpoint{}
	buf := keyBuffers.Get().(*[32]byte)
	defer keyBuffers.Put(buf)
	for range max(n, 0) {
		key, err := decodeKey(dec, buf[:])
		if err != nil {
			return fmt.Errorf("endpoint: %w", err)
		}
		switch string(key) {
		case fieldDNSName:
			e.DNSName, err = dec.DecodeString()
		case fieldRecordType:
			e.RecordType, err = dec.DecodeString()
		case fieldTargets:
			e.Targets, err = decodeStrings(dec)
		case fieldSetIdentifier:
			e.SetIdentifier, err = dec.DecodeString()
		case fieldRecordTTL:
			e.RecordTTL, err = dec.DecodeInt64()
		case fieldLabels:
			err = dec.Decode(&e.Labels)
		case fieldProviderSpecific:
			err = dec.Decode(&e.ProviderSpecific)
		default:
			err = dec.Skip()
		}
		if err != nil {
			return fmt.Errorf("endpoint: %s: %w", key, err)
		}
	}
	return nil
}

// keyBuffers hold a key while it is compared with the fields' names: a
// buffer of the stack would escape to the heap through the decoder's
// reader, once per endpoint.
var keyBuffers = sync.Pool{New: func() any { return new([32]byte) }} // longer than every field's name

// decodeKey reads a map key into buf without making a string of it; a
// key longer than buf is read past and returned empty: no field is
// called that.
func decodeKey(dec *msgpack.Decoder, buf []byte) ([]byte, error) {
	n, err := dec.DecodeBytesLen()
	if err != nil || n <= 0 {
		return buf[:0], err
	}
	if n <= len(buf) {
		return buf[:n], dec.ReadFull(buf[:n])
	}
	for n > 0 {
		k := min(n, len(buf))
		if err := dec.ReadFull(buf[:k]); err != nil {
			return nil, err
		}
		n -= k
	}
	return buf[:0], nil
}

// decodeStrings reads an array of strings; nil for msgpack's nil.
func decodeStrings(dec *msgpack.Decoder) ([]string, error) {
	n, err := dec.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	ss := make([]string, n)
	for i := range ss {
		if ss[i], err = dec.DecodeString(); err != nil {
			return nil, err
		}
	}
	return ss, nil
}
