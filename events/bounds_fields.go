package events

import (
	"reflect"
	"strings"
	"sync"
)

// structShape is a struct's fields as msgpack decodes them: by the name
// of their msgpack tag (the Go name without one), in declaration order
// for the array form.
type structShape struct {
	list   []*field
	byName map[string]*field
}

type field struct {
	typ reflect.Type
	lim *limit // nil: no limit of its own
}

var structShapes sync.Map // reflect.Type -> *structShape

func fieldsOf(t reflect.Type) *structShape {
	if s, ok := structShapes.Load(t); ok {
		return s.(*structShape)
	}
	s := &structShape{byName: map[string]*field{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		name, _, _ := strings.Cut(sf.Tag.Get("msgpack"), ",")
		if !sf.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		f := &field{typ: sf.Type}
		if l, ok := fieldLimits[t][name]; ok {
			f.lim = &l
		}
		s.list = append(s.list, f)
		s.byName[name] = f
	}
	structShapes.Store(t, s)
	return s
}
