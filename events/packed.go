package events

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Packed is a value a stage keeps encoded rather than decoded: bytes the
// garbage collector does not scan and that take a fraction of the decoded
// value's memory, for state held per name and rarely read (the portal's
// last plan of each name). Unpack decodes it when it is read.
type Packed[T any] []byte

// Pack encodes v as events are encoded.
func Pack[T any](v T) (Packed[T], error) {
	buf := buffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer release(buf)
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(buf)
	enc.SetOmitEmpty(true)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("pack %T: %w", v, err)
	}
	return Packed[T](bytes.Clone(buf.Bytes())), nil
}

// Unpack decodes the value; the zero value for no bytes.
func (p Packed[T]) Unpack() (T, error) {
	var v T
	if len(p) == 0 {
		return v, nil
	}
	if err := msgpack.Unmarshal(p, &v); err != nil {
		return v, fmt.Errorf("unpack %T: %w", v, err)
	}
	return v, nil
}
